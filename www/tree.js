// The hierarchy panel: the flat, path-sorted node list of a store (RemoteStore.nodes:
// { path, kind, shape, dtype, error, attrs, dims }) as a tree of groups (expand and collapse)
// holding arrays (name, shape, dtype), links and refused nodes (with the reason, node.error).

/** Nodes as a tree: { node, name, children } per node; a missing parent group is implied. */
export function nest(nodes) {
  const byPath = new Map();
  const root = { node: { path: "/", kind: "group", shape: null, dtype: null, error: null, attrs: {}, dims: null },
    name: "/", children: [] };
  byPath.set("/", root);
  const ensure = (path) => {
    if (byPath.has(path)) return byPath.get(path);
    const parentPath = path.slice(0, path.lastIndexOf("/")) || "/";
    const entry = { node: { path, kind: "group", shape: null, dtype: null, error: null, attrs: {}, dims: null, implied: true },
      name: path.slice(path.lastIndexOf("/") + 1), children: [] };
    byPath.set(path, entry);
    ensure(parentPath).children.push(entry);
    return entry;
  };
  for (const n of [...nodes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    if (n.path === "/") { root.node = n; continue; }
    const entry = ensure(n.path);
    entry.node = n;
  }
  return root;
}

/** `(12, 24, 36)` for a shape, `()` for a scalar, "" for none. */
export const shapeText = (shape) => (Array.isArray(shape) ? `(${shape.join(", ")}${shape.length === 1 ? "," : ""})` : "");

/**
 * Renders the tree into `container` (a <ul>). Every node is an `li[data-path][data-kind]`
 * holding a `button.node` (an `li.refused` when it has an error, whose reason follows in
 * `.reason`); a group's children sit in a nested <ul>, toggled by its `button.toggle`
 * (aria-expanded). `onSelect(node)` runs when a node's button is pressed.
 */
export function renderTree(container, root, { onSelect, collapsed = new Set() } = {}) {
  container.replaceChildren();
  const item = (entry, depth) => {
    const n = entry.node;
    const li = document.createElement("li");
    li.dataset.path = n.path;
    li.dataset.kind = n.kind;
    li.setAttribute("role", "treeitem");
    if (n.error) li.classList.add("refused");
    const line = document.createElement("div");
    line.className = "line";
    line.style.paddingLeft = `${depth * 14}px`;
    if ((n.kind === "group" || n.kind === "table") && entry.children.length) {
      const t = document.createElement("button");
      t.type = "button";
      t.className = "toggle";
      const open = !collapsed.has(n.path);
      t.setAttribute("aria-expanded", String(open));
      t.setAttribute("aria-label", `${open ? "collapse" : "expand"} ${n.path}`);
      t.textContent = open ? "▾" : "▸";
      t.addEventListener("click", () => {
        const now = t.getAttribute("aria-expanded") !== "true";
        t.setAttribute("aria-expanded", String(now));
        t.textContent = now ? "▾" : "▸";
        t.setAttribute("aria-label", `${now ? "collapse" : "expand"} ${n.path}`);
        li.querySelector(":scope > ul").hidden = !now;
        if (now) collapsed.delete(n.path); else collapsed.add(n.path);
      });
      line.append(t);
    } else {
      const pad = document.createElement("span");
      pad.className = "toggle-pad";
      line.append(pad);
    }
    const b = document.createElement("button");
    b.type = "button";
    b.className = "node";
    const icon = { group: "▣", array: "▦", link: "↪", table: "▤" }[n.kind] || "•";
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = `${icon} ${entry.name}`;
    name.dataset.name = entry.name;
    b.append(name);
    if (n.kind === "array") {
      const meta = document.createElement("span");
      meta.className = "meta";
      meta.textContent = [shapeText(n.shape), n.dtype].filter(Boolean).join(" ");
      b.append(meta);
    }
    b.title = n.error ? `${n.path}: ${n.error}` : n.path;
    b.addEventListener("click", () => onSelect && onSelect(n));
    line.append(b);
    li.append(line);
    if (n.error) {
      const r = document.createElement("div");
      r.className = "reason";
      r.style.paddingLeft = `${depth * 14 + 30}px`;
      r.textContent = n.error;
      li.append(r);
    }
    if (entry.children.length) {
      const ul = document.createElement("ul");
      ul.setAttribute("role", "group");
      ul.hidden = collapsed.has(n.path);
      for (const c of entry.children) ul.append(item(c, depth + 1));
      li.append(ul);
    }
    return li;
  };
  container.append(item(root, 0));
}

/** Marks the node at `path` as the selected one. */
export function markSelected(container, path) {
  for (const li of container.querySelectorAll("li.selected")) li.classList.remove("selected");
  const li = Array.from(container.querySelectorAll("li[data-path]")).find((e) => e.dataset.path === path);
  if (li) li.classList.add("selected");
}
