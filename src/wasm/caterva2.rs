//! Caterva2 credentials in a JS host: what a browser lets a script send.
//!
//! caterva2 2026.9.2's login (`POST auth/jwt/login`, fastapi-users' cookie transport) answers
//! 204 with only a `Set-Cookie: c2subauth=...; HttpOnly; Path=/; SameSite=lax`, no body, and
//! its CORS middleware answers `Access-Control-Allow-Origin: *` without
//! `Access-Control-Allow-Credentials`. Measured in headless Chromium (tests/e2e/caterva2.test.mjs):
//! - a page of the server's own origin logs in with a plain `fetch` (credentials mode
//!   "same-origin"); the browser keeps the cookie, hides it from the script (`Set-Cookie` is
//!   not readable, `document.cookie` is empty) and sends it with the later requests;
//! - a page of another origin (another port of 127.0.0.1) reads `@public` (CORS `*`), but a
//!   credentialed `fetch` (`credentials: "include"`) is refused by the browser (a `*` origin
//!   cannot carry credentials), and an uncredentialed one gets 401: no cross-origin page can
//!   read a private root of such a server;
//! - a script may not set a `Cookie` header (a forbidden header name: `fetch` drops it), so a
//!   token cannot be sent from a page or a worker at all.
//!
//! Node has no page origin and no forbidden headers: there the core reads `Set-Cookie` and
//! sends the cookie itself, as natively (tests/e2e/caterva2.test.mjs). workerd has no
//! `location` either, so nothing is refused there; it is not tested with credentials.

use crate::formats::caterva2::Credentials;
use wasm_bindgen::prelude::*;

/// The page's origin (`globalThis.location.origin`) in a window or worker; `None` in Node
/// and workerd (no `location`).
fn page_origin() -> Option<String> {
    let location = js_sys::Reflect::get(&js_sys::global(), &"location".into()).ok()?;
    if location.is_undefined() || location.is_null() {
        return None;
    }
    js_sys::Reflect::get(&location, &"origin".into())
        .ok()?
        .as_string()
}

/// The origin of `url` resolved against the page (`new URL(url, location.href).origin`).
fn origin_of(url: &str) -> Option<String> {
    let global = js_sys::global();
    let ctor: js_sys::Function = js_sys::Reflect::get(&global, &"URL".into())
        .ok()?
        .dyn_into()
        .ok()?;
    let base = js_sys::Reflect::get(&global, &"location".into())
        .ok()
        .and_then(|l| js_sys::Reflect::get(&l, &"href".into()).ok())
        .unwrap_or(JsValue::UNDEFINED);
    let args = js_sys::Array::of2(&JsValue::from_str(url), &base);
    let parsed = js_sys::Reflect::construct(&ctor, &args).ok()?;
    js_sys::Reflect::get(&parsed, &"origin".into())
        .ok()?
        .as_string()
}

/// Refuses, before any request, Caterva2 credentials a browser cannot send to `url`: a
/// token in a window or worker, and a login for a server of another origin than the page's
/// (see the module documentation). Messages name neither the credentials nor the URL's
/// query.
///
/// # Errors
/// `INVALID_ARGUMENT`.
pub(crate) fn check_host_credentials(
    url: &str,
    credentials: Option<&Credentials>,
) -> Result<(), JsValue> {
    let (Some(credentials), Some(page)) = (credentials, page_origin()) else {
        return Ok(());
    };
    if matches!(credentials, Credentials::Token(_)) {
        return Err(super::arg_error(
            "credentials { token } cannot be sent from a browser: a page may not set a Cookie \
             header. Log in with { username, password } from a page of the server's origin \
             (the browser then keeps the c2subauth cookie and sends it itself)",
        ));
    }
    let target = origin_of(url).unwrap_or_default();
    if target != page {
        return Err(super::arg_error(format!(
            "credentials need a page of the Caterva2 server's origin ({target}), not {page}: \
             the server's CORS (Access-Control-Allow-Origin: *) lets no other origin send its \
             login cookie. Public roots (@public) read from any origin without credentials"
        )));
    }
    Ok(())
}
