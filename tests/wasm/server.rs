//! The fixture servers' base URLs, compiled into the wasm tests by `scripts/test-wasm.sh`
//! (`option_env!`, read at build time: a wasm test cannot read the environment when it runs).
//!
//! A URL missing at build time fails the test that needs it: a test that passes without its
//! server tests nothing. To build the tests without servers on purpose (to check that they
//! compile), set `CHUNKWISE_WASM_SKIP_SERVER=1` at build time; each such test then says on
//! the console that it was skipped and returns.

/// `value`, the build-time value of the variable `name`; `None` (skip) only when
/// `CHUNKWISE_WASM_SKIP_SERVER` was set at build time.
///
/// # Panics
/// `value` is `None` and no skip was asked for.
pub fn url(value: Option<&'static str>, name: &str) -> Option<&'static str> {
    match value {
        Some(v) => Some(v),
        None if option_env!("CHUNKWISE_WASM_SKIP_SERVER").is_some() => {
            wasm_bindgen_test::console_log!("{name} unset at build time: skipped");
            None
        }
        None => panic!(
            "{name} was not set at build time: run scripts/test-wasm.sh (or build with \
             CHUNKWISE_WASM_SKIP_SERVER=1 to skip the tests that need a server)"
        ),
    }
}
