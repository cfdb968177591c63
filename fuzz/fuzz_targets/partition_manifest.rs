//! Arbitrary text as a partition manifest: parsing (JSON, then the schema-3 rules) must give a
//! manifest or a typed error, never a panic; a manifest that parses must survive its own
//! serialisation unchanged and resolve keys without panicking.
#![no_main]

use chunkwise::partition::{resolve, Manifest};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(m) = Manifest::loads(text) else {
        return;
    };
    let again = Manifest::loads(&m.dumps()).expect("a dumped manifest parses");
    assert_eq!(again, m, "the manifest changed through dumps/loads");
    for key in ["zarr.json", "a/zarr.json", "a/c/0/0", "a/c/1", "x/.zarray", "", "a/b/c/d/e"] {
        let _ = resolve(&m, key);
    }
});
