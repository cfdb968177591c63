//! Numeric results as JS typed arrays: which typed array a dtype reads as, the one copy out of
//! wasm memory, and the checks of a caller's buffer (`RemoteArray.readInto`).
//!
//! | dtype | typed array |
//! | --- | --- |
//! | `|b1`, `|u1`, `|V{n}` | `Uint8Array` |
//! | `|i1` | `Int8Array` |
//! | `<i2` `<u2` `<i4` `<u4` | `Int16Array` `Uint16Array` `Int32Array` `Uint32Array` |
//! | `<i8` `<u8` | `BigInt64Array` `BigUint64Array` |
//! | `<f2` | `Float16Array` where the runtime has it (`globalThis.Float16Array`), else `Float32Array` (values converted exactly) |
//! | `<f4` `<f8` | `Float32Array` `Float64Array` |
//! | `<c8` `<c16` | `Float32Array` `Float64Array`, interleaved `re, im` pairs (twice the elements) |
//! | `<M8[unit]` `<m8[unit]` | `BigInt64Array` (counts of `unit`; NaT is `-(2n ** 63n)`) |
//!
//! Bytes arrive little-endian ([`crate::dtype::DType::make_little_endian`] first). Every
//! conversion but float16's fallback is one copy: wasm memory into a new `ArrayBuffer` (or the
//! caller's), no per-element step.

use super::arg_error;
use crate::dtype::{DType, Kind};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The typed array `bytes` (little-endian elements of `kind` and `itemsize`) read as: one
/// copy out of wasm memory (see the module table).
pub(crate) fn typed_array(kind: Kind, itemsize: usize, bytes: &[u8]) -> JsValue {
    if (kind, itemsize) == (Kind::Float, 2) && float16_class().is_none() {
        return js_sys::Float32Array::from(&halves_to_f32(bytes)[..]).into();
    }
    let copy = js_sys::Uint8Array::new_with_length(bytes.len() as u32);
    copy.copy_from(bytes);
    let buf = copy.buffer();
    match class_name(kind, itemsize) {
        "Uint8Array" => copy.into(),
        "Int8Array" => js_sys::Int8Array::new(&buf).into(),
        "Int16Array" => js_sys::Int16Array::new(&buf).into(),
        "Uint16Array" => js_sys::Uint16Array::new(&buf).into(),
        "Int32Array" => js_sys::Int32Array::new(&buf).into(),
        "Uint32Array" => js_sys::Uint32Array::new(&buf).into(),
        "BigInt64Array" => js_sys::BigInt64Array::new(&buf).into(),
        "BigUint64Array" => js_sys::BigUint64Array::new(&buf).into(),
        "Float16Array" => float16_class()
            .and_then(|c| js_sys::Reflect::construct(&c, &js_sys::Array::of1(&buf)).ok())
            .unwrap_or_else(|| copy.into()),
        "Float32Array" => js_sys::Float32Array::new(&buf).into(),
        _ => js_sys::Float64Array::new(&buf).into(),
    }
}

/// The name of the typed array class elements of `kind` and `itemsize` read as (the module
/// table), `Float16Array` for float16 whether or not the runtime has it.
fn class_name(kind: Kind, itemsize: usize) -> &'static str {
    match (kind, itemsize) {
        (Kind::Int, 1) => "Int8Array",
        (Kind::UInt, 1) | (Kind::Bool, 1) | (Kind::Void, _) | (Kind::Bytes, _) => "Uint8Array",
        (Kind::Int, 2) => "Int16Array",
        (Kind::UInt, 2) => "Uint16Array",
        (Kind::Float, 2) => "Float16Array",
        (Kind::Int, 4) => "Int32Array",
        (Kind::UInt, 4) => "Uint32Array",
        (Kind::Int, 8) | (Kind::Datetime(_), _) | (Kind::Timedelta(_), _) => "BigInt64Array",
        (Kind::UInt, 8) => "BigUint64Array",
        (Kind::Float, 4) | (Kind::Complex, 8) => "Float32Array",
        _ => "Float64Array",
    }
}

/// The class a result of `dtype` has in this runtime, and its element count for `n`
/// elements of the array (complex: two per element).
pub(crate) fn result_class(dtype: DType, n: u64) -> (&'static str, u64) {
    let name = match class_name(dtype.kind, dtype.itemsize) {
        "Float16Array" if float16_class().is_none() => "Float32Array",
        c => c,
    };
    let per = if dtype.kind == Kind::Complex { 2 } else { 1 };
    (name, n * per)
}

/// `globalThis.Float16Array` where the runtime has it (Chrome 135+, Firefox 129+, Safari
/// 18.2+, Node 24+).
fn float16_class() -> Option<js_sys::Function> {
    js_sys::Reflect::get(&js_sys::global(), &"Float16Array".into())
        .ok()
        .and_then(|c| c.dyn_into().ok())
}

/// IEEE binary16 values (little-endian bits) as `f32`, exactly (every half is an `f32`).
fn halves_to_f32(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(2)
        .map(|b| crate::element::half_to_f64(u16::from_le_bytes([b[0], b[1]])) as f32)
        .collect()
}

/// The class name of a typed array (`Float32Array`, ...; its `Symbol.toStringTag`), or
/// `None` for anything else.
fn tag_of(target: &JsValue) -> Option<String> {
    if !js_sys::ArrayBuffer::is_view(target) || target.is_instance_of::<js_sys::DataView>() {
        return None;
    }
    js_sys::Reflect::get(target, &js_sys::Symbol::to_string_tag())
        .ok()?
        .as_string()
}

/// Checks that `target` is the typed array a result of `dtype` with `n` elements reads as
/// ([`result_class`]), of exactly that length.
///
/// # Errors
/// `INVALID_ARGUMENT` naming the class and length expected and given.
pub(crate) fn check_target(target: &JsValue, dtype: DType, n: u64) -> Result<(), JsValue> {
    let (want, len) = result_class(dtype, n);
    let given = tag_of(target);
    let given_len = js_sys::Reflect::get(target, &"length".into())
        .ok()
        .and_then(|l| l.as_f64());
    if given.as_deref() == Some(want) && given_len == Some(len as f64) {
        return Ok(());
    }
    let what = match (given, given_len) {
        (Some(c), Some(l)) => format!("{c} of length {l}"),
        _ => "not a typed array".to_string(),
    };
    let complex = if dtype.kind == Kind::Complex {
        " (complex: re, im pairs)"
    } else {
        ""
    };
    Err(arg_error(format!(
        "readInto: the selection reads {n} elements of {dtype}, which need a {want} of length \
         {len}{complex}; given {what}"
    )))
}

/// Copies `bytes` (little-endian elements of `dtype`) into `target`, checked by
/// [`check_target`]: one copy out of wasm memory (float16 without `Float16Array`: converted
/// to `f32` first).
///
/// # Errors
/// `INVALID_ARGUMENT` when the sizes differ after all (the buffer was detached or resized
/// during the read).
pub(crate) fn copy_into(target: &JsValue, dtype: DType, bytes: &[u8]) -> Result<(), JsValue> {
    let changed = || arg_error("readInto: the target buffer changed size during the read");
    if (dtype.kind, dtype.itemsize) == (Kind::Float, 2) && float16_class().is_none() {
        let f: &js_sys::Float32Array = target.unchecked_ref();
        if f.length() as usize * 2 != bytes.len() {
            return Err(changed());
        }
        f.copy_from(&halves_to_f32(bytes));
        return Ok(());
    }
    let get = |name: &str| {
        js_sys::Reflect::get(target, &name.into())
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0) as u32
    };
    // Checked before making the view: a buffer detached meanwhile has byteLength 0, and a
    // view on it would throw.
    if get("byteLength") as usize != bytes.len() {
        return Err(changed());
    }
    let buf = js_sys::Reflect::get(target, &"buffer".into()).unwrap_or(JsValue::UNDEFINED);
    let view = js_sys::Uint8Array::new_with_byte_offset_and_length(
        &buf,
        get("byteOffset"),
        get("byteLength"),
    );
    view.copy_from(bytes);
    Ok(())
}
