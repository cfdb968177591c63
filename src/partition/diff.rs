//! What a repartition changed, by blob id (blobmap-partition.md, `Diff`, `diff`).

use std::collections::HashMap;

use super::model::{Blob, Bucket, Manifest};

/// Blobs added, removed and redefined between two manifests.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diff {
    /// Blobs that did not exist before, in the new manifest's order. Always safe.
    pub added: Vec<Blob>,
    /// Blobs that disappeared, in the old manifest's order: their tape copies are orphaned.
    pub removed: Vec<Blob>,
    /// `(old, new)` for ids whose definition changed: the tape copy no longer matches.
    pub modified: Vec<(Blob, Blob)>,
}

impl Diff {
    /// True when no existing blob changed or disappeared (only additions).
    pub fn is_additive(&self) -> bool {
        self.removed.is_empty() && self.modified.is_empty()
    }

    /// True when nothing changed at all.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.is_additive()
    }

    /// One line per change, as blobmap prints them: `+ <id> ['<prefix>', ...]`,
    /// `- <id> [...]`, `~ <id>: <old> -> <new>` (blob definitions in Python dict notation), or
    /// `(no change)`.
    pub fn describe(&self) -> String {
        let mut lines: Vec<String> = Vec::new();
        for b in &self.added {
            lines.push(format!("+ {} {}", b.id, py_list(&b.prefixes)));
        }
        for b in &self.removed {
            lines.push(format!("- {} {}", b.id, py_list(&b.prefixes)));
        }
        for (o, n) in &self.modified {
            lines.push(format!("~ {}: {} -> {}", o.id, py_blob(o), py_blob(n)));
        }
        if lines.is_empty() {
            "(no change)".to_owned()
        } else {
            lines.join("\n")
        }
    }
}

/// Compare two manifests by blob id; with no `old` every blob counts as added.
pub fn diff(old: Option<&Manifest>, new: &Manifest) -> Diff {
    let Some(old) = old else {
        return Diff {
            added: new.blobs.clone(),
            ..Diff::default()
        };
    };
    let old_ids: HashMap<&str, &Blob> = old.blobs.iter().map(|b| (b.id.as_str(), b)).collect();
    let new_ids: HashMap<&str, &Blob> = new.blobs.iter().map(|b| (b.id.as_str(), b)).collect();
    let mut d = Diff::default();
    for b in &new.blobs {
        if !old_ids.contains_key(b.id.as_str()) {
            d.added.push(b.clone());
        }
    }
    for a in &old.blobs {
        match new_ids.get(a.id.as_str()).copied() {
            None => d.removed.push(a.clone()),
            Some(b) if b != a => d.modified.push((a.clone(), b.clone())),
            Some(_) => {}
        }
    }
    d
}

/// Python's `repr` of a str: single quotes unless the text holds a `'` and no `"`.
fn py_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn py_list(items: &[String]) -> String {
    let parts: Vec<String> = items.iter().map(|s| py_str(s)).collect();
    format!("[{}]", parts.join(", "))
}

fn py_bucket(b: &Option<Bucket>) -> String {
    match b {
        None => "None".to_owned(),
        Some(b) => format!(
            "{{'index': {}, 'width': {}, 'key_encoding': {}}}",
            b.index,
            b.width,
            py_str(b.key_encoding.as_str())
        ),
    }
}

fn py_blob(b: &Blob) -> String {
    format!(
        "{{'id': {}, 'prefixes': {}, 'bucket': {}}}",
        py_str(&b.id),
        py_list(&b.prefixes),
        py_bucket(&b.bucket)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_repr_of_strings() {
        assert_eq!(py_str("tas/c"), "'tas/c'");
        assert_eq!(py_str("it's"), "\"it's\"");
        assert_eq!(py_str("a'\"b"), "'a\\'\"b'");
        assert_eq!(py_str("a\\b\n"), "'a\\\\b\\n'");
    }
}
