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
    /// Path of its array (`/P/_cols/name`).
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
                    let col_path = format!("{base}/_cols/{name}");
                    let error = match nodes.iter().find(|n| n.path == col_path) {
                        None => Some(format!(
                            "column {name} ({kind}): no member _cols/{name}.b2nd"
                        )),
                        Some(n) if n.kind != NodeKind::Array => {
                            Some(format!("column {name} ({kind}): not an array"))
                        }
                        Some(n) => n
                            .error
                            .as_ref()
                            .map(|e| format!("column {name} ({kind}): {e}")),
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
