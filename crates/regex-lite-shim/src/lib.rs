//! `regex-lite` under the name `regex`, for the one crate of chunkwise's dependency graph
//! that uses `regex`: `zarrs_plugin` 0.4, which matches a few data type names by pattern
//! (zarrs 0.23 `raw_bits.rs`: `^r\d+$`, `^\|V\d+$`; `fixed_length_utf32.rs`: `^[<>]U\d+$`)
//! through `Regex::new` and `Regex::is_match` only. The root Cargo.toml's
//! `[patch.crates-io]` puts this crate in `regex`'s place.
//!
//! Why: `regex` with its default features (Unicode tables, the lazy DFA, Aho-Corasick) was
//! about 256 KB of the gzipped wasm module (1,486,675 bytes gzip -9 with it, 1,230,025 with
//! `regex-lite`), and compiling the first pattern took milliseconds of a Zarr open.
//! `regex-lite` is the `regex` project's small engine with the same syntax; its `\d` is
//! ASCII where `regex`'s is Unicode, which changes nothing here: zarrs parses the digits
//! with `str::parse`, which refuses non-ASCII digits either way (`formats::zarr::meta`'s
//! `data_types_named_by_pattern` test checks the names both ways).
//!
//! A new dependency that needs more of `regex`'s API fails to compile against this crate,
//! never silently: then drop the patch.

pub use regex_lite::*;
