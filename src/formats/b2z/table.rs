//! python-blosc2 CTables in a `.b2z`: which arrays of a table's group are its columns and
//! its valid-rows mask (facts: "python-blosc2 4.14.1 CTable saved as .b2z").
//!
//! A CTable at group `P` is the members `P/_meta.b2f` (a super-chunk whose vlmeta holds
//! `kind = "ctable"`, `version` and `schema`, a JSON text `{"columns": [{"name", "kind",
//! ...}], "n_rows"}`), `P/_valid_rows.b2nd` (a `|b1` array: false marks a deleted row),
//! `P/_cols/<name>.b2nd` per column (`.b2b` for a variable-length column) and summary
//! indexes under `P/_indexes/`. The listing shows `_meta.b2f`'s vlmeta as `P`'s attributes,
//! and `P` as a [`NodeKind::Table`].

use crate::attrs::AttrValue;
use crate::formats::{FormatError, Node, NodeKind};

/// One column of a CTable.
#[derive(Debug, Clone, PartialEq)]
pub struct CTableColumn {
    /// The column's name.
    pub name: String,
    /// The schema's kind (`int64`, `string`, `vlstring`, ...).
    pub kind: String,
    /// Path of its array (`/P/_cols/` and [`column_relpath`]).
    pub path: String,
    /// Why it cannot be read as an array (a `.b2b` batch array, a missing member).
    pub error: Option<String>,
}

/// A CTable's layout: its columns in schema order, the mask's path and the schema's row
/// count (live rows).
#[derive(Debug, Clone, PartialEq)]
pub struct CTableLayout {
    /// The columns.
    pub columns: Vec<CTableColumn>,
    /// Path of the valid-rows mask.
    pub mask: String,
    /// `n_rows` of the schema.
    pub nrows: Option<u64>,
}

/// Whether a column of `kind` is stored as one 1-D array of fixed-size values, one per physical row
/// (python-blosc2 `schema.py`): the columns read here. Every other kind (`vlstring`,
/// `vlbytes`, `list`, `object`, `struct`, `ndarray`, `utf8`, `dictionary`, kinds to come) is
/// listed with an error, never read as its storage array.
fn plain_kind(kind: &str) -> bool {
    crate::dtype::BLOSC2_SCHEMA_NUMERIC.contains(&kind)
        || matches!(kind, "bool" | "string" | "bytes" | "timestamp")
}

/// Suffix of a nullable column's validity sidecar (python-blosc2 `ctable_storage.py`
/// `_NOTNULL_SUFFIX`): a `|b1` array, true where the value is not null.
const NOTNULL_SUFFIX: &str = ".notnull";

/// The path of column `name` under `_cols` (python-blosc2 `ctable_storage.py`
/// `_column_name_to_relpath`): split at unescaped dots (a backslash escapes the next
/// character), each segment with `%`, `/`, `.` and `\` percent-encoded, joined with `/`.
/// Column `a.b` is `a/b`, column `a\.b` (a dot in the name) is `a%2Eb`, `a/b` is `a%2Fb`.
pub fn column_relpath(name: &str) -> String {
    let mut segments = vec![String::new()];
    let mut escaped = false;
    for ch in name.chars() {
        if escaped {
            segments.last_mut().unwrap().push(ch);
            escaped = false;
        } else if ch == '\\' {
            escaped = true;
        } else if ch == '.' {
            segments.push(String::new());
        } else {
            segments.last_mut().unwrap().push(ch);
        }
    }
    if escaped {
        segments.last_mut().unwrap().push('\\');
    }
    segments
        .iter()
        .map(|s| {
            s.replace('%', "%25")
                .replace('/', "%2F")
                .replace('.', "%2E")
                .replace('\\', "%5C")
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The CTable metadata of a group's attributes (`kind = "ctable"` and its parsed
/// `schema`), if it is one.
pub fn schema(attrs: &crate::attrs::Attrs) -> Option<serde_json::Value> {
    let get = |k: &str| attrs.0.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    match get("kind") {
        Some(AttrValue::String(k)) if k == "ctable" => {}
        _ => return None,
    }
    match get("schema") {
        Some(AttrValue::String(s)) => serde_json::from_slice(s.as_bytes()).ok(),
        _ => None,
    }
}

/// The layout of the CTable at `path` among `nodes`.
///
/// # Errors
/// [`FormatError::NoSuchNode`] when `path` is not a table (saying what it is).
pub fn layout(location: &str, nodes: &[Node], path: &str) -> Result<CTableLayout, FormatError> {
    let node = nodes.iter().find(|n| n.path == path);
    let Some(schema) = node.and_then(|n| schema(&n.attrs)) else {
        let what = match node {
            None => "nothing".to_string(),
            Some(n) => format!("a {:?}", n.kind).to_lowercase(),
        };
        return Err(FormatError::NoSuchNode {
            location: location.to_string(),
            detail: format!("{path} is {what}, not a table (no CTable metadata _meta.b2f there)"),
        });
    };
    let base = if path == "/" {
        String::new()
    } else {
        path.to_string()
    };
    let columns = schema["columns"]
        .as_array()
        .map(|cols| {
            cols.iter()
                .filter_map(|c| {
                    let name = c["name"].as_str()?.to_string();
                    let kind = c["kind"].as_str().unwrap_or("").to_string();
                    let rel = column_relpath(&name);
                    let col_path = format!("{base}/_cols/{rel}");
                    let node = nodes.iter().find(|n| n.path == col_path);
                    // A nullable column keeps its nulls in a validity sidecar
                    // (`<column>.notnull`, made on the first null written): its values array
                    // holds placeholders where the sidecar says null.
                    let nulls = nodes
                        .iter()
                        .any(|n| n.path == format!("{col_path}{NOTNULL_SUFFIX}"));
                    let plain = plain_kind(&kind);
                    let error = match node {
                        // The member's own reason first (a `.b2b` batch array, a bad frame).
                        Some(n) if n.error.is_some() => n
                            .error
                            .as_ref()
                            .map(|e| format!("column {name} ({kind}): {e}")),
                        _ if !plain => Some(format!(
                            "column {name} ({kind}): a {kind} column is not read here (its array holds {})",
                            match kind.as_str() {
                                "dictionary" => "the codes of a dictionary-encoded column",
                                "utf8" => "the offsets of variable-length strings",
                                _ => "values of another layout",
                            }
                        )),
                        None => Some(format!(
                            "column {name} ({kind}): no member _cols/{rel}.b2nd"
                        )),
                        Some(n) if n.kind != NodeKind::Array => {
                            Some(format!("column {name} ({kind}): not an array"))
                        }
                        _ if nulls => Some(format!(
                            "column {name} ({kind}): a nullable column with nulls (validity sidecar _cols/{rel}{NOTNULL_SUFFIX}) is not read here"
                        )),
                        _ => None,
                    };
                    Some(CTableColumn {
                        name,
                        kind,
                        path: col_path,
                        error,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(CTableLayout {
        columns,
        mask: format!("{base}/_valid_rows"),
        nrows: schema["n_rows"].as_u64(),
    })
}

#[cfg(test)]
mod tests {
    use super::column_relpath;

    #[test]
    fn column_paths_follow_python_blosc2() {
        assert_eq!(column_relpath("id"), "id");
        assert_eq!(column_relpath("a.b"), "a/b");
        assert_eq!(column_relpath("a/b"), "a%2Fb");
        assert_eq!(column_relpath("a\\.b"), "a%2Eb");
        assert_eq!(column_relpath("a\\\\b"), "a%5Cb");
        assert_eq!(column_relpath("50%"), "50%25");
        assert_eq!(column_relpath("a\\"), "a%5C");
    }
}
