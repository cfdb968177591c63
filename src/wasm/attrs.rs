//! Attributes for JavaScript: [`crate::attrs::AttrValue`] as plain JS values.

use crate::attrs::{AttrValue, Attrs};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_ATTRS: &'static str = r#"
/** One attribute value: numbers (BigInt for 64-bit integers outside 2^53), booleans,
 *  strings, null; numeric arrays as typed arrays (C order, flattened: see AttrArray for
 *  their shape), lists, and objects for JSON objects and HDF5 compounds. A value chunkwise
 *  does not show is { omitted: reason }. */
export type AttrValue = number | bigint | boolean | string | null |
  Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array |
  BigInt64Array | BigUint64Array | Float32Array | Float64Array | Float16Data |
  AttrValue[] | { [name: string]: AttrValue };
/** Attributes of an array or a group, by name, in the order the source lists them. */
export type Attrs = { [name: string]: AttrValue };
"#;

/// The attributes as one plain JS object (see the `Attrs` TypeScript type).
pub(crate) fn attrs_js(attrs: &Attrs) -> JsValue {
    let o = js_sys::Object::new();
    for (name, v) in &attrs.0 {
        let _ = js_sys::Reflect::set(&o, &JsValue::from_str(name), &value_js(v));
    }
    o.into()
}

/// One value: a numeric array becomes the typed array of its dtype (flattened; a
/// multi-dimensional array also gets a `shape` property), integers outside 2^53 a BigInt.
pub(crate) fn value_js(v: &AttrValue) -> JsValue {
    const SAFE: i64 = 1 << 53;
    match v {
        AttrValue::Null => JsValue::NULL,
        AttrValue::Bool(b) => JsValue::from_bool(*b),
        // `unsigned_abs`: `abs` of i64::MIN overflows (wrapping in release, so -2^63 came as
        // a number, unlike every other integer past 2^53; a panic in debug builds).
        AttrValue::Int(i) if i.unsigned_abs() <= SAFE as u64 => JsValue::from_f64(*i as f64),
        AttrValue::Int(i) => js_sys::BigInt::from(*i).into(),
        AttrValue::UInt(u) if *u <= SAFE as u64 => JsValue::from_f64(*u as f64),
        AttrValue::UInt(u) => js_sys::BigInt::from(*u).into(),
        AttrValue::Float(f) => JsValue::from_f64(*f),
        AttrValue::String(s) => JsValue::from_str(s),
        AttrValue::Array { dtype, shape, data } => {
            let t = super::array::typed_array(dtype.kind, dtype.itemsize, data);
            if shape.len() > 1 {
                let s: js_sys::Array = shape.iter().map(|&n| JsValue::from_f64(n as f64)).collect();
                let _ = js_sys::Reflect::set(&t, &"shape".into(), &s);
            }
            t
        }
        AttrValue::List(items) => items.iter().map(value_js).collect::<js_sys::Array>().into(),
        AttrValue::Map(fields) => {
            let o = js_sys::Object::new();
            for (k, v) in fields {
                let _ = js_sys::Reflect::set(&o, &JsValue::from_str(k), &value_js(v));
            }
            o.into()
        }
        AttrValue::Omitted(why) => {
            let o = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&o, &"omitted".into(), &JsValue::from_str(why));
            o.into()
        }
    }
}

/// Dimension names as a JS array of strings and nulls, or `null` when none are named.
pub(crate) fn dims_js(dims: Option<&[Option<String>]>) -> JsValue {
    match dims {
        None => JsValue::NULL,
        Some(d) => d
            .iter()
            .map(|n| n.as_deref().map(JsValue::from_str).unwrap_or(JsValue::NULL))
            .collect::<js_sys::Array>()
            .into(),
    }
}
