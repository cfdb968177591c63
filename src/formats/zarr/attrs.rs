//! Zarr attributes and dimension names, as [`crate::attrs`] values.
//!
//! - Attributes: a v2 node's `.zattrs` object (Zarr storage specification v2, "Attributes")
//!   and a v3 node's `attributes` member of `zarr.json` (Zarr v3 core specification, "Array
//!   metadata" / "Group metadata"), in either case also the copies held by consolidated
//!   metadata. zarr-python writes non-finite floats as the bare tokens `NaN`, `Infinity` and
//!   `-Infinity` (Python's `json.dumps`, which is not JSON); [`parse_json`] reads them and
//!   [`attrs`] gives them back as floats.
//! - Dimension names: v3 `dimension_names` (one string or `null` per dimension), else
//!   xarray's `_ARRAY_DIMENSIONS` attribute (a list of strings, one per dimension; xarray's
//!   convention for Zarr v2, `xarray.backends.zarr`), else none.

use crate::attrs::{AttrValue, Attrs, MAX_ATTR_BYTES};
use serde_json::Value;

/// Marks a string that stood for a bare non-finite number in the text read: a private-use
/// character no attribute written as JSON text starts with by accident.
const NON_FINITE: char = '\u{F8FF}';

/// A metadata document: JSON, or JSON with the bare `NaN`, `Infinity` and `-Infinity` tokens
/// zarr-python writes for non-finite floats (outside strings). Those become marked strings
/// in the value, read back as floats by [`attrs`]; elsewhere (a `fill_value`) they are
/// strings `zarrs` refuses, as it would the text.
///
/// # Errors
/// `serde_json`'s error for text that is not JSON even with those tokens.
pub fn parse_json(raw: &str) -> Result<Value, serde_json::Error> {
    match serde_json::from_slice(raw.as_bytes()) {
        Ok(v) => Ok(v),
        Err(e) => match quote_non_finite(raw) {
            Some(fixed) => serde_json::from_slice(fixed.as_bytes()),
            None => Err(e),
        },
    }
}

/// `raw` with each bare `NaN`, `Infinity` or `-Infinity` outside a string replaced by a
/// marked string; `None` when there is none.
fn quote_non_finite(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    let mut replaced = false;
    let mut rest = raw;
    while let Some(c) = rest.chars().next() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else {
            let token = ["-Infinity", "Infinity", "NaN"]
                .into_iter()
                .find(|t| rest.starts_with(t));
            if let Some(t) = token {
                out.push('"');
                out.push(NON_FINITE);
                out.push_str(t);
                out.push('"');
                rest = &rest[t.len()..];
                replaced = true;
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    replaced.then_some(out)
}

/// The attributes of a JSON object (`.zattrs`, v3 `attributes`); anything else (absent,
/// `null`, not an object) gives none. Values whose running size passes [`MAX_ATTR_BYTES`]
/// are [`AttrValue::Omitted`], naming their size.
pub fn attrs(v: Option<&Value>) -> Attrs {
    let Some(Value::Object(m)) = v else {
        return Attrs::new();
    };
    let mut used = 0usize;
    Attrs(
        m.iter()
            .map(|(k, v)| {
                let n = json_size(v);
                used = used.saturating_add(n).saturating_add(k.len());
                let value = if used > MAX_ATTR_BYTES {
                    AttrValue::Omitted(format!(
                        "{n} bytes of JSON, past the {MAX_ATTR_BYTES}-byte attribute budget"
                    ))
                } else {
                    value(v)
                };
                (k.clone(), value)
            })
            .collect(),
    )
}

/// About the bytes of `v` as JSON text (an upper bound on what its value holds).
fn json_size(v: &Value) -> usize {
    match v {
        Value::Null | Value::Bool(_) | Value::Number(_) => 8,
        Value::String(s) => s.len() + 2,
        Value::Array(a) => a.iter().map(json_size).fold(2, usize::saturating_add),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| k.len() + 3 + json_size(v))
            .fold(2, usize::saturating_add),
    }
}

/// One attribute value, reading marked strings ([`parse_json`]) as non-finite floats.
fn value(v: &Value) -> AttrValue {
    match v {
        Value::String(s) => match s.strip_prefix(NON_FINITE) {
            Some("NaN") => AttrValue::Float(f64::NAN),
            Some("Infinity") => AttrValue::Float(f64::INFINITY),
            Some("-Infinity") => AttrValue::Float(f64::NEG_INFINITY),
            _ => AttrValue::String(s.clone()),
        },
        Value::Array(items) => AttrValue::List(items.iter().map(value).collect()),
        Value::Object(m) => AttrValue::Map(m.iter().map(|(k, v)| (k.clone(), value(v))).collect()),
        other => AttrValue::from_json(other),
    }
}

/// The dimension names of an array of `ndim` dimensions: v3 `dimension_names` of `doc`
/// (strings or `null`), else the `_ARRAY_DIMENSIONS` attribute (strings), else `None`. A
/// value of another length or holding other types names none.
pub fn dims(doc: &Value, attrs: &Attrs, ndim: usize) -> Option<Vec<Option<String>>> {
    if let Some(Value::Array(names)) = doc.get("dimension_names") {
        let got: Option<Vec<Option<String>>> = names
            .iter()
            .map(|n| match n {
                Value::String(s) => Some(Some(s.clone())),
                Value::Null => Some(None),
                _ => None,
            })
            .collect();
        if let Some(got) = got.filter(|g| g.len() == ndim) {
            return Some(got);
        }
    }
    match attrs.get("_ARRAY_DIMENSIONS") {
        Some(AttrValue::List(names)) if names.len() == ndim => names
            .iter()
            .map(|n| match n {
                AttrValue::String(s) => Some(Some(s.clone())),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_non_finite_numbers_read_as_floats_and_strings_stay() {
        let raw = r#"{"a": NaN, "b": [Infinity, -Infinity], "s": "NaN Infinity \" NaN", "n": 1}"#;
        assert!(serde_json::from_str::<Value>(raw).is_err());
        let doc = parse_json(raw).unwrap();
        let a = attrs(Some(&doc));
        assert!(matches!(a.get("a"), Some(AttrValue::Float(f)) if f.is_nan()));
        assert_eq!(
            a.get("b"),
            Some(&AttrValue::List(vec![
                AttrValue::Float(f64::INFINITY),
                AttrValue::Float(f64::NEG_INFINITY)
            ]))
        );
        assert_eq!(
            a.get("s"),
            Some(&AttrValue::String("NaN Infinity \" NaN".into()))
        );
        assert_eq!(a.get("n"), Some(&AttrValue::Int(1)));
        assert!(parse_json("{not json").is_err());
        assert!(parse_json("{\"a\": NaNa}").is_err());
    }

    #[test]
    fn dimension_names_then_xarray_then_none() {
        let doc: Value = serde_json::json!({"dimension_names": ["t", null]});
        assert_eq!(
            dims(&doc, &Attrs::new(), 2),
            Some(vec![Some("t".into()), None])
        );
        let xr = attrs(Some(&serde_json::json!({"_ARRAY_DIMENSIONS": ["y", "x"]})));
        assert_eq!(
            dims(&Value::Null, &xr, 2),
            Some(vec![Some("y".into()), Some("x".into())])
        );
        assert_eq!(dims(&Value::Null, &xr, 3), None);
        assert_eq!(dims(&doc, &Attrs::new(), 3), None);
        assert_eq!(dims(&Value::Null, &Attrs::new(), 0), None);
    }

    #[test]
    fn values_past_the_budget_are_omitted() {
        let big = "x".repeat(MAX_ATTR_BYTES / 2 + 10);
        let doc = serde_json::json!({"a": big, "b": big, "c": 1});
        let a = attrs(Some(&doc));
        assert!(matches!(a.get("a"), Some(AttrValue::String(_))));
        assert!(matches!(a.get("b"), Some(AttrValue::Omitted(w)) if w.contains("budget")));
    }
}
