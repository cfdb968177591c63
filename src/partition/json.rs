//! An order-preserving JSON value and a writer whose output matches Python's
//! `json.dumps(value, indent=2)` byte for byte.
//!
//! Manifests are read by humans and diffed as text, so a manifest read and written again must come
//! out identical. `serde_json::Value` sorts object keys unless a crate-wide feature is enabled, so
//! this module keeps its own small value type whose objects are lists of `(key, value)` pairs in
//! document order.

use std::collections::HashMap;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::ser::{Formatter, PrettyFormatter};

use super::PartitionError;

/// A JSON value whose objects keep their keys in document order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// Any number; integers stay exact (`u64`/`i64`).
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, keys in document order. A repeated key keeps its first position and last value.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Parse JSON text.
    ///
    /// Errors: [`PartitionError::Json`] when the text is not JSON (nesting deeper than 128 levels
    /// is refused by the parser rather than recursing without bound).
    pub fn parse(text: &str) -> Result<Json, PartitionError> {
        serde_json::from_str(text).map_err(|e| PartitionError::Json {
            message: e.to_string(),
        })
    }

    /// Render as Python's `json.dumps(value, indent=2)` does: two-space indent, `", "`/`": "`
    /// separators inside the layout, non-ASCII and DEL escaped as `\uXXXX`, no trailing newline.
    pub fn to_pretty_string(&self) -> String {
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonFormatter::new());
        // Serialising this type into a Vec cannot fail: no maps with non-string keys, no I/O.
        self.serialize(&mut ser)
            .expect("serialising Json into memory");
        String::from_utf8(out).expect("serde_json writes UTF-8")
    }

    /// The integer value, if this is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    /// Whether this is an integer number (of either sign), not a float.
    pub fn is_integer(&self) -> bool {
        matches!(self, Json::Number(n) if n.is_u64() || n.is_i64())
    }

    /// The string value, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// Look up a key of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The JSON type name, as used in error messages (`object`, `array`, `string`, `integer`,
    /// `number`, `boolean`, `null`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Number(_) if self.is_integer() => "integer",
            Json::Number(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }

    /// Shorthand for an unsigned integer value.
    pub fn uint(v: u64) -> Json {
        Json::Number(v.into())
    }

    /// Shorthand for a string value.
    pub fn str(v: impl Into<String>) -> Json {
        Json::String(v.into())
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        Json::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Json, E> {
        // JavaScript numbers arrive as f64 even when integral; keep those as integers.
        if v.fract() == 0.0 && v >= 0.0 && v <= u64::MAX as f64 && v < 9.007_199_254_740_992e15 {
            return Ok(Json::Number((v as u64).into()));
        }
        if v.fract() == 0.0 && v < 0.0 && v > -9.007_199_254_740_992e15 {
            return Ok(Json::Number((v as i64).into()));
        }
        serde_json::Number::from_f64(v)
            .map(Json::Number)
            .ok_or_else(|| E::custom("NaN or infinite number"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Json>()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut entries: Vec<(String, Json)> = Vec::new();
        // Position of each key, so a large object (provenance of many arrays) stays linear.
        let mut position: HashMap<String, usize> = HashMap::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            // Python's dict keeps the first position and the last value of a repeated key.
            match position.get(&k) {
                Some(&i) => entries[i].1 = v,
                None => {
                    position.insert(k.clone(), entries.len());
                    entries.push((k, v));
                }
            }
        }
        Ok(Json::Object(entries))
    }
}

/// `PrettyFormatter` with two-space indent, plus Python's `ensure_ascii` escaping.
struct PythonFormatter<'a> {
    inner: PrettyFormatter<'a>,
}

impl PythonFormatter<'_> {
    fn new() -> Self {
        PythonFormatter {
            inner: PrettyFormatter::with_indent(b"  "),
        }
    }
}

impl Formatter for PythonFormatter<'_> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        // Python escapes everything outside printable ASCII (space to tilde); serde_json already
        // escapes the control characters, so only DEL and non-ASCII are left to handle here.
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if (c as u32) < 0x7f {
                continue;
            }
            w.write_all(&fragment.as_bytes()[start..i])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(w, "\\u{:04x}", unit)?;
            }
            start = i + c.len_utf8();
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.inner.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.inner.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_python_indent_2_layout() {
        let v = Json::Object(vec![
            ("b".into(), Json::uint(1)),
            ("a".into(), Json::Array(vec![])),
            ("c".into(), Json::Object(vec![])),
            ("d".into(), Json::Array(vec![Json::str("x"), Json::Null])),
        ]);
        // Expected text is what `json.dumps({...}, indent=2)` prints for the same dict.
        assert_eq!(
            v.to_pretty_string(),
            "{\n  \"b\": 1,\n  \"a\": [],\n  \"c\": {},\n  \"d\": [\n    \"x\",\n    null\n  ]\n}"
        );
    }

    #[test]
    fn escapes_like_ensure_ascii() {
        // json.dumps("é😀\x7f\n") == '"\\u00e9\\ud83d\\ude00\\u007f\\n"'
        assert_eq!(
            Json::str("é😀\u{7f}\n").to_pretty_string(),
            "\"\\u00e9\\ud83d\\ude00\\u007f\\n\""
        );
    }

    #[test]
    fn keeps_key_order_and_python_duplicate_rule() {
        let v = Json::parse(r#"{"z": 1, "a": 2, "z": 3}"#).unwrap();
        assert_eq!(
            v,
            Json::Object(vec![
                ("z".into(), Json::uint(3)),
                ("a".into(), Json::uint(2))
            ])
        );
    }

    #[test]
    fn rejects_non_json_and_deep_nesting() {
        assert!(matches!(Json::parse("{"), Err(PartitionError::Json { .. })));
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert!(matches!(
            Json::parse(&deep),
            Err(PartitionError::Json { .. })
        ));
    }
}
