//! The hierarchy of a container as text for people (`chunkwise ls`, and `chunkwise info`
//! on a container without `--path`): one line per node, children indented two spaces below
//! their group, in the depth-first order of `h5ls -r` and `tree`.
//!
//! ```text
//! /
//!   model/
//!     run1/
//!       values  [10, 10] <f4
//!     weights  [6, 4] <i8
//!   time  [100] <u4
//!   ext  link: external link to other.h5:/data
//! ```
//!
//! A group's name ends in `/`; an array shows its shape (elements per dimension, `[]` for a
//! scalar) and numpy typestr; a node that cannot be read shows `refused:` and the reason
//! ([`chunkwise::formats::Node::error`]); a link shows `link:` and where it leads.

use chunkwise::formats::{Node, NodeKind};

/// The tree text of `nodes` (paths absolute, `/` the root), one line per node ending in a
/// newline. Nodes are ordered depth-first by path segment, so `/a/b` follows `/a` and
/// precedes `/a-b`, whatever order the listing gave.
/// The nodes as one JSON list of `{"path","kind","shape","dtype","error"}` (what `info`
/// prints for a hierarchy); `with_attrs` adds `"dims"` and `"attrs"` (plain JSON, see
/// [`chunkwise::attrs::AttrValue::to_json`]) where a node has them (what `ls --json` prints).
pub fn nodes_json(nodes: &[Node], with_attrs: bool) -> serde_json::Value {
    nodes
        .iter()
        .map(|n| {
            let mut v = serde_json::json!({
                "path": n.path, "kind": n.kind, "shape": n.shape, "dtype": n.dtype, "error": n.error,
            });
            if with_attrs {
                if let Some(d) = &n.dims {
                    v["dims"] = serde_json::json!(d);
                }
                if !n.attrs.is_empty() {
                    v["attrs"] = n.attrs.to_json();
                }
            }
            v
        })
        .collect()
}

/// The nodes at `path` and below it (`/a` holds `/a` and `/a/...`, not `/ab`), in order;
/// `None` when no node is at `path`.
pub fn subtree(nodes: &[Node], path: &str) -> Option<Vec<Node>> {
    let at = chunkwise::store::normalise_path(path);
    if !nodes.iter().any(|n| n.path == at) {
        return None;
    }
    let below = if at == "/" {
        "/".to_string()
    } else {
        format!("{at}/")
    };
    Some(
        nodes
            .iter()
            .filter(|n| n.path == at || n.path.starts_with(&below))
            .cloned()
            .collect(),
    )
}

pub fn format_tree(nodes: &[Node]) -> String {
    let mut sorted: Vec<&Node> = nodes.iter().collect();
    sorted.sort_by(|a, b| segments(&a.path).cmp(&segments(&b.path)));
    let mut out = String::new();
    for n in sorted {
        let segs = segments(&n.path);
        let name = segs.last().copied().unwrap_or("/");
        let indent = "  ".repeat(segs.len());
        out.push_str(&indent);
        out.push_str(&node_line(name, n));
        out.push('\n');
    }
    out
}

/// One node as `name` and what it is, without indentation: `name/` for a group,
/// `name  [shape] dtype` for an array, `name  link: reason`, `name  refused: reason`.
pub fn node_line(name: &str, n: &Node) -> String {
    let mut line = match n.kind {
        NodeKind::Group | NodeKind::Table if name == "/" => "/".to_string(),
        NodeKind::Group | NodeKind::Table => format!("{name}/"),
        NodeKind::Array | NodeKind::Link => name.to_string(),
    };
    match (n.kind, &n.error) {
        (NodeKind::Table, _) => {
            let rows = n
                .shape
                .as_ref()
                .and_then(|s| s.first())
                .copied()
                .unwrap_or(0);
            line.push_str(&format!("  table, {rows} rows"));
        }
        (NodeKind::Link, e) => {
            line.push_str("  link: ");
            line.push_str(e.as_deref().unwrap_or("leads outside the container"));
        }
        (NodeKind::Group, Some(e)) => {
            line.push_str("  (");
            line.push_str(e);
            line.push(')');
        }
        (NodeKind::Group, None) => {}
        (NodeKind::Array, Some(e)) => {
            if let Some(shape) = &n.shape {
                line.push_str(&format!("  {}", shape_text(shape)));
            }
            line.push_str("  refused: ");
            line.push_str(e);
        }
        (NodeKind::Array, None) => {
            match &n.shape {
                Some(shape) => line.push_str(&format!("  {}", shape_text(shape))),
                None => line.push_str("  (no shape)"),
            }
            if let Some(d) = &n.dtype {
                line.push(' ');
                line.push_str(d);
            }
        }
    }
    line
}

/// `[10, 10]`, `[]` for a scalar.
fn shape_text(shape: &[u64]) -> String {
    format!(
        "[{}]",
        shape
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(path: &str, kind: NodeKind, shape: Option<Vec<u64>>, error: Option<&str>) -> Node {
        Node {
            path: path.into(),
            kind,
            dtype: shape.as_ref().map(|_| "<f4".to_string()),
            shape,
            error: error.map(str::to_string),
            attrs: Default::default(),
            dims: None,
        }
    }

    #[test]
    fn depth_first_by_segment_with_kinds_and_reasons() {
        let nodes = vec![
            node("/a-b", NodeKind::Array, Some(vec![3]), None),
            node("/a/x", NodeKind::Array, Some(vec![]), None),
            node("/", NodeKind::Group, None, None),
            node("/a", NodeKind::Group, None, None),
            node("/v", NodeKind::Array, None, Some("virtual dataset")),
            node("/l", NodeKind::Link, None, Some("external link to f.h5:/d")),
        ];
        assert_eq!(
            format_tree(&nodes),
            "/\n  a/\n    x  [] <f4\n  a-b  [3] <f4\n  l  link: external link to f.h5:/d\n  v  refused: virtual dataset\n"
        );
    }
}
