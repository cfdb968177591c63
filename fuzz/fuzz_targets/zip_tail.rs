//! Arbitrary bytes as a whole `.b2z` ZIP archive: the directory parser, fed a suffix of it
//! (the whole input, or a tail whose length the first byte picks) and then every range it
//! asks for, must give a directory or a typed error within 3 requests, each for bytes not yet
//! known inside the archive; every entry's local header must then give a data range inside
//! the archive or a typed error.
#![no_main]

use bytes::Bytes;
use chunkwise::formats::b2z::zip::{parse_directory, LocalHeader, Step, MAX_DIRECTORY_BYTES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let len = data.len() as u64;
    // Whole input, or a tail of 22 + 16 * (first byte) bytes: small tails make the parser
    // ask for the end record's surroundings, the ZIP64 record and the central directory.
    let tail = match data.first() {
        Some(&b) if b % 2 == 1 => 22 + 16 * u64::from(b),
        _ => len,
    }
    .min(len);
    let start = (len - tail) as usize;
    let mut known = vec![(len - tail, Bytes::copy_from_slice(&data[start..]))];
    let mut needs = 0;
    let directory = loop {
        match parse_directory(len, &known) {
            Ok(Step::Done(d)) => break d,
            Err(_) => return,
            Ok(Step::Need(r)) => {
                needs += 1;
                assert!(needs <= 3, "more than 3 needs");
                assert!(r.start < r.end && r.end <= len, "need {r:?} of {len}");
                assert!(r.start >= len.saturating_sub(MAX_DIRECTORY_BYTES));
                for (s, b) in &known {
                    let e = s + b.len() as u64;
                    assert!(
                        r.start < *s || r.start >= e,
                        "need {r:?} starts in known bytes"
                    );
                    assert!(r.end <= *s || r.end > e, "need {r:?} ends in known bytes");
                }
                let piece = Bytes::copy_from_slice(&data[r.start as usize..r.end as usize]);
                known.push((r.start, piece));
            }
        }
    };
    assert!(directory.tail_range.end == len && directory.tail_range.start <= len);
    for e in &directory.entries {
        let _ = e.check_stored();
        assert!(e.header_offset < directory.tail_range.start);
        let at = e.header_offset as usize;
        let mut want = 30usize;
        for _ in 0..2 {
            let local = &data[at..(at + want).min(data.len())];
            match e.data_range(local, len) {
                Ok(LocalHeader::Data(r)) => {
                    assert!(r.start >= e.header_offset + 30 && r.end <= len);
                    assert_eq!(r.end - r.start, e.compressed_size);
                    break;
                }
                Ok(LocalHeader::Need(n)) => {
                    assert!(n as usize > local.len());
                    if local.len() < want {
                        break; // the archive ends inside the local header
                    }
                    want = n as usize;
                }
                Err(_) => break,
            }
        }
    }
});
