//! Codecs: Blosc2 in pure Rust (decode everywhere, including wasm32; encode for the payload
//! cache's converted chunks).

pub mod blosc2;
