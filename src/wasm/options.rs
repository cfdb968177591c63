//! The options object of a JS call, read once through one catching JS function
//! (`options.js`) into a plain copy the bindings then read. A getter that throws, a Proxy
//! whose trap throws, or a cyclic `headers` object then fails the call with
//! `INVALID_ARGUMENT`; read from Rust directly, the exception would unwind through the
//! module's frames (imports without `catch` cannot stop it) and an open's promise would
//! never settle.

use super::arg_error;
use crate::open::options::{struct_fields, OpenOptionsInput, ReadOptionsInput, JS_OBJECT_FIELDS};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/wasm/options.js")]
extern "C" {
    #[wasm_bindgen(js_name = snapshotOptions, catch)]
    fn snapshot_options(
        options: &JsValue,
        fields: Vec<JsValue>,
        references: Vec<JsValue>,
    ) -> Result<JsValue, JsValue>;
}

/// The longest part of a thrown message repeated in the error (bytes).
const MAX_MESSAGE: usize = 200;

/// A plain copy of `options` with the names of `fields` copied as data and those of
/// `references` kept as the caller's objects; `undefined`, `null` and values that are no
/// object come back as they are (see `snapshotOptions` in `options.js`).
///
/// # Errors
/// `INVALID_ARGUMENT` "options could not be read: ..." with the thrown message (cut to
/// 200 bytes) when reading them threw.
pub(crate) fn snapshot(
    options: &JsValue,
    fields: &[&str],
    references: &[&str],
) -> Result<JsValue, JsValue> {
    if options.is_undefined() || options.is_null() || !options.is_object() {
        return Ok(options.clone());
    }
    let names = |list: &[&str]| list.iter().map(|&n| JsValue::from_str(n)).collect();
    snapshot_options(options, names(fields), names(references)).map_err(|thrown| {
        let message = match thrown.dyn_ref::<js_sys::Error>() {
            Some(e) => String::from(e.message()),
            None => thrown
                .as_string()
                .unwrap_or_else(|| "a value that is no Error".into()),
        };
        let mut end = message.len().min(MAX_MESSAGE);
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        let cut = if end < message.len() { "..." } else { "" };
        arg_error(format!(
            "options could not be read: {}{cut}",
            &message[..end]
        ))
    })
}

/// [`snapshot`] of the options of `RemoteArray.open`, `RemoteStore.open` and the table
/// opens: the fields of [`OpenOptionsInput`] and the JS objects `signal` and `cacheStore`.
pub(crate) fn open(options: &JsValue) -> Result<JsValue, JsValue> {
    snapshot(
        options,
        struct_fields::<OpenOptionsInput>(),
        JS_OBJECT_FIELDS,
    )
}

/// [`snapshot`] of the options of a read: the fields of [`ReadOptionsInput`] and `extra`
/// (e.g. `readRows`' `columns`) as data, `signal` and `onProgress` as the caller's objects.
pub(crate) fn read(options: &JsValue, extra: &[&str]) -> Result<JsValue, JsValue> {
    let fields: Vec<&str> = struct_fields::<ReadOptionsInput>()
        .iter()
        .chain(extra)
        .copied()
        .collect();
    snapshot(options, &fields, JS_OBJECT_FIELDS)
}
