//! `renderPng` for JavaScript: a typed array of a 2-D selection as a PNG preview
//! ([`crate::render`]).

use super::js_error;
use crate::dtype::DType;
use crate::render::{RenderError, RenderOptions};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(typescript_custom_section)]
const TS_RENDER: &'static str = r#"
/** Options of `renderPng`. */
export interface RenderPngOptions {
  /** Colour map: "viridis" (default), "gray", "magma", "inferno", "plasma" or "RdBu". */
  cmap?: string;
  /** Value at the map's first entry (default: the smallest finite value). */
  vmin?: number;
  /** Value at the map's last entry (default: the largest finite value). */
  vmax?: number;
  /** Largest image allowed, rows x columns (default 16,777,216 = 4096 x 4096); Infinity for
   *  no bound but PNG's (2^31 - 1 rows and columns). */
  maxPixels?: number;
}
"#;

/// The element type a typed array holds, by its class (`Symbol.toStringTag`).
fn dtype_of(data: &JsValue) -> Option<DType> {
    if !js_sys::ArrayBuffer::is_view(data) || data.is_instance_of::<js_sys::DataView>() {
        return None;
    }
    let tag = js_sys::Reflect::get(data, &js_sys::Symbol::to_string_tag())
        .ok()?
        .as_string()?;
    let typestr = match tag.as_str() {
        "Int8Array" => "|i1",
        "Uint8Array" | "Uint8ClampedArray" => "|u1",
        "Int16Array" => "<i2",
        "Uint16Array" => "<u2",
        "Int32Array" => "<i4",
        "Uint32Array" => "<u4",
        "BigInt64Array" => "<i8",
        "BigUint64Array" => "<u8",
        "Float16Array" => "<f2",
        "Float32Array" => "<f4",
        "Float64Array" => "<f8",
        _ => return None,
    };
    DType::parse(typestr).ok()
}

/// A number option: `undefined`/`null` is none, anything else must be a number.
fn number_opt(options: &JsValue, name: &str) -> Result<Option<f64>, JsValue> {
    match super::array::get_opt(options, name) {
        None => Ok(None),
        Some(v) => v
            .as_f64()
            .map(Some)
            .ok_or_else(|| super::arg_error(format!("renderPng: {name} must be a number"))),
    }
}

fn render_options(options: &JsValue) -> Result<RenderOptions, JsValue> {
    let options = &super::options::snapshot(options, &["cmap", "vmin", "vmax", "maxPixels"], &[])?;
    let mut o = RenderOptions::default();
    if let Some(c) = super::array::get_opt(options, "cmap") {
        let name = super::string_arg(&c, "renderPng: cmap")?;
        o.cmap = crate::render::colormap_named(&name).map_err(render_error)?;
    }
    o.vmin = number_opt(options, "vmin")?;
    o.vmax = number_opt(options, "vmax")?;
    if let Some(m) = number_opt(options, "maxPixels")? {
        // Integers past u64 (1e300, 2 ** 64) and Infinity all mean no bound short of PNG's
        // own (2^31 - 1 rows and columns): the cast saturates.
        if !(m >= 0.0 && (m.fract() == 0.0 || m == f64::INFINITY)) {
            return Err(super::arg_error(
                "renderPng: maxPixels must be a non-negative integer or Infinity",
            ));
        }
        o.max_pixels = m as u64;
    }
    Ok(o)
}

fn render_error(e: RenderError) -> JsValue {
    js_error(&crate::Error::Render(e))
}

/// Renders `data`, a 2-D selection's values in C order (a read's `data`, typed `ReadData`
/// so that it passes as it is; it must be a numeric typed array: `Float32Array`,
/// `Float64Array`, `Int8Array` ... `BigUint64Array`, `Float16Array`; bools as their
/// `Uint8Array` of 0 and 1) of `shape` (2-D once size-1 dimensions are dropped; row 0 on
/// top), through a colour map into a PNG file (RGBA, 8 bits): the picture
/// `chunkwise preview` writes for the same values (src/render: NaN and infinities
/// transparent, vmin/vmax default to the finite minimum and maximum, constant data the
/// middle of the map). Returns the file's bytes. Throws a `ChunkwiseError`:
/// `INVALID_ARGUMENT` for data that is no numeric typed array, a length that does not
/// match `shape`, a shape not 2-D, an unknown `cmap`, a non-finite or reversed
/// `vmin`/`vmax`, a typed array whose buffer was detached (no bytes); `INVALID_SELECTION`
/// (the code of size limits) for more pixels than `maxPixels`, naming the limit, or a side
/// longer than a PNG image's 2^31 - 1.
#[wasm_bindgen(js_name = renderPng)]
pub fn render_png(
    #[wasm_bindgen(unchecked_param_type = "ReadData")] data: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number[]")] shape: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "RenderPngOptions")] options: JsValue,
) -> Result<Vec<u8>, JsValue> {
    let shape = shape_from_js(&shape)?;
    let options = render_options(&options)?;
    crate::render::check_size(&shape, options.max_pixels).map_err(render_error)?;
    let dtype = dtype_of(&data).ok_or_else(|| {
        super::arg_error("renderPng: data must be a numeric typed array (Float32Array, Int16Array, BigInt64Array, ...)")
    })?;
    let byte_length = number_opt(&data, "byteLength")?.unwrap_or(0.0) as u32;
    // A view of a detached buffer (transferred to a worker, say) has length 0, and viewing
    // its buffer again throws a TypeError: it holds no bytes, which the length check refuses.
    let bytes = if byte_length == 0 {
        Vec::new()
    } else {
        js_sys::Uint8Array::new_with_byte_offset_and_length(
            &js_sys::Reflect::get(&data, &"buffer".into())?,
            number_opt(&data, "byteOffset")?.unwrap_or(0.0) as u32,
            byte_length,
        )
        .to_vec()
    };
    let preview =
        crate::render::render_png(&bytes, dtype, &shape, &options).map_err(render_error)?;
    Ok(preview.png)
}

/// A shape from JS: an Array of non-negative integers.
fn shape_from_js(shape: &JsValue) -> Result<Vec<u64>, JsValue> {
    let shape = &super::options::list(shape, "renderPng: shape")?;
    let arr = shape
        .dyn_ref::<js_sys::Array>()
        .ok_or_else(|| super::arg_error("renderPng: shape must be an array of numbers"))?;
    arr.iter()
        .map(|v| match v.as_f64() {
            Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= u64::MAX as f64 => Ok(n as u64),
            _ => Err(super::arg_error(format!(
                "renderPng: shape entry {v:?} is not a non-negative integer"
            ))),
        })
        .collect()
}
