//! `RemoteArray` over `fetch` in wasm: every Blosc2 fixture read from the loopback server and
//! compared with the written array. `scripts/test-wasm.sh` runs this file in Node, headless
//! Chromium and a dedicated worker.
#![cfg(target_arch = "wasm32")]

use crate::array_checks as checks;

use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
async fn every_fixture_matches_the_written_array() {
    checks::every_fixture_matches().await;
}

#[wasm_bindgen_test]
async fn errors_are_typed() {
    checks::errors_are_typed().await;
}
