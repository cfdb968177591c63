//! PNG files from 8-bit RGBA pixels (PNG 1.2, ISO/IEC 15948): the signature and the three
//! chunks a preview needs (IHDR, IDAT, IEND), rows with the Up filter, the zlib stream made by
//! `fdeflate` (image-rs' compressor for filtered PNG rows) and each chunk's CRC-32 by
//! `zlib-rs`.
//!
//! Why not the `png` crate: its encoder chooses the compressor at run time, so the wasm module
//! kept all of it although previews use one level: flate2's deflate (zlib-rs' compressor),
//! fdeflate's decompressor and crc32fast's 16 KB table came along, about 34 KB of the gzipped
//! module for the four chunks written here. The bytes are those of `png` 0.18's
//! `Compression::Fastest` (Up filter, `fdeflate::Compressor`, stored blocks when they are
//! smaller), which the tests check file for file against that crate.

use std::io::Cursor;

/// The 8 bytes every PNG file starts with (PNG 1.2 section 3.1).
const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];
/// The longest chunk data and the largest width or height PNG allows: 2^31 - 1 (section 3.2).
const MAX_LEN: u32 = (1 << 31) - 1;
/// PNG's filter type 2, Up: each byte minus the byte above it (section 6.3).
const FILTER_UP: u8 = 2;
/// PNG's filter type 0, None (the rows of stored blocks).
const FILTER_NONE: u8 = 0;

/// The PNG file of an image `width` x `height` pixels whose `rgba` holds 4 bytes (r, g, b,
/// alpha; straight, not premultiplied) per pixel, row by row from the top, left to right
/// (`rgba.len() == 4 * width * height`). Colour type 6 (RGBA), bit depth 8, no gamma or
/// colour-space chunks (sRGB by convention), each row with the Up filter and compressed by
/// fdeflate (a colour-mapped image is mostly runs and smooth gradients, and a preview is made
/// per request); when that is larger than the rows stored uncompressed (noise), the rows are
/// stored, unfiltered.
///
/// # Errors
/// A message when the sizes disagree or exceed PNG's limits (width and height 1 to
/// 2^31 - 1).
pub fn encode_rgba(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, String> {
    if width == 0 || height == 0 || width > MAX_LEN || height > MAX_LEN {
        return Err(format!(
            "a {width} x {height} image: PNG needs a width and height from 1 to {MAX_LEN}"
        ));
    }
    let expected = 4 * width as u64 * height as u64;
    if rgba.len() as u64 != expected {
        return Err(format!(
            "{} bytes of pixels for a {width} x {height} RGBA image, which needs {expected}",
            rgba.len()
        ));
    }
    let zlib = image_data(rgba, 4 * width as usize).map_err(|e| format!("PNG encoder: {e}"))?;
    let mut out = Vec::with_capacity(zlib.len() + 64);
    out.extend_from_slice(&SIGNATURE);
    let mut header = [0u8; 13];
    header[..4].copy_from_slice(&width.to_be_bytes());
    header[4..8].copy_from_slice(&height.to_be_bytes());
    // Bit depth 8, colour type 6 (RGBA), compression 0, filter method 0, no interlace.
    header[8..].copy_from_slice(&[8, 6, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &header);
    for part in zlib.chunks(MAX_LEN as usize) {
        chunk(&mut out, b"IDAT", part);
    }
    chunk(&mut out, b"IEND", &[]);
    Ok(out)
}

/// The zlib stream of the IDAT chunks: rows of `row_len` bytes, each with its filter type
/// byte first. Up-filtered rows through `fdeflate::Compressor`, or the unfiltered rows in
/// stored blocks when those are smaller (as `png` 0.18 does for `Compression::Fastest`).
fn image_data(rgba: &[u8], row_len: usize) -> std::io::Result<Vec<u8>> {
    let mut compressor = fdeflate::Compressor::new(Vec::new())?;
    let mut line = vec![0u8; row_len + 1];
    line[0] = FILTER_UP;
    let mut above: Option<&[u8]> = None;
    for row in rgba.chunks_exact(row_len) {
        match above {
            // The first row's Up filter subtracts zeros.
            None => line[1..].copy_from_slice(row),
            Some(above) => {
                for ((out, &x), &b) in line[1..].iter_mut().zip(row).zip(above) {
                    *out = x.wrapping_sub(b);
                }
            }
        }
        compressor.write_data(&line)?;
        above = Some(row);
    }
    let compressed = compressor.finish()?;
    let raw = (row_len + 1) * (rgba.len() / row_len);
    if compressed.len() <= fdeflate::StoredOnlyCompressor::<()>::compressed_size(raw) {
        return Ok(compressed);
    }
    let mut stored = fdeflate::StoredOnlyCompressor::new(Cursor::new(Vec::new()))?;
    for row in rgba.chunks_exact(row_len) {
        stored.write_data(&[FILTER_NONE])?;
        stored.write_data(row)?;
    }
    Ok(stored.finish()?.into_inner())
}

/// Appends one chunk: data length (big-endian), type, data, CRC-32 of type and data.
fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = zlib_rs::crc32::crc32(zlib_rs::crc32::crc32(0, kind), data);
    out.extend_from_slice(&crc.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `png` 0.18 writes for the same pixels at `Compression::Fastest` (the encoder this
    /// module stands in for).
    fn by_png_crate(width: u32, height: u32, rgba: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = ::png::Encoder::new(&mut out, width, height);
        encoder.set_color(::png::ColorType::Rgba);
        encoder.set_depth(::png::BitDepth::Eight);
        encoder.set_compression(::png::Compression::Fastest);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(rgba).unwrap();
        writer.finish().unwrap();
        out
    }

    /// xorshift64: seeded pixels without a dependency.
    fn noise(n: usize, mut seed: u64) -> Vec<u8> {
        (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 32) as u8
            })
            .collect()
    }

    #[test]
    fn the_same_file_as_the_png_crate() {
        // A gradient (compressed), seeded noise (stored blocks: fdeflate's output is larger),
        // one pixel, one row, one column, and an image wider than fdeflate's 32 KB window.
        let gradient: Vec<u8> = (0..64 * 48)
            .flat_map(|i| [(i % 64 * 4) as u8, (i / 64 * 5) as u8, 7, 255])
            .collect();
        let cases: Vec<(u32, u32, Vec<u8>)> = vec![
            (64, 48, gradient),
            (40, 30, noise(40 * 30 * 4, 0x9E37_79B9_7F4A_7C15)),
            (1, 1, vec![10, 20, 30, 255]),
            (300, 1, noise(300 * 4, 7)),
            (1, 300, noise(300 * 4, 8).iter().map(|b| b & 0xF0).collect()),
            (
                9000,
                3,
                (0..9000 * 3 * 4).map(|i| (i / 4 % 251) as u8).collect(),
            ),
        ];
        for (w, h, rgba) in cases {
            let ours = encode_rgba(w, h, &rgba).unwrap();
            assert_eq!(ours, by_png_crate(w, h, &rgba), "{w} x {h}");
            // And the pixels come back (png's decoder checks every CRC and the zlib sum).
            let mut reader = ::png::Decoder::new(Cursor::new(&ours)).read_info().unwrap();
            let mut buf = vec![0; reader.output_buffer_size().unwrap()];
            let info = reader.next_frame(&mut buf).unwrap();
            assert_eq!((info.width, info.height), (w, h));
            assert_eq!(&buf[..info.buffer_size()], &rgba[..], "{w} x {h}");
        }
    }

    #[test]
    fn stored_when_compression_does_not_pay() {
        // Noise: the IDAT data is the rows stored, 5 bytes of block header per 64 KiB block,
        // plus zlib's 2-byte header and 4-byte sum.
        let rgba = noise(100 * 100 * 4, 3);
        let png = encode_rgba(100, 100, &rgba).unwrap();
        let idat_len = u32::from_be_bytes(png[33..37].try_into().unwrap()) as usize;
        assert_eq!(&png[37..41], b"IDAT");
        let raw: usize = 100 * (1 + 400);
        assert_eq!(idat_len, 2 + raw + 5 * raw.div_ceil(65535) + 4);
    }

    #[test]
    fn sizes_are_checked() {
        assert!(encode_rgba(0, 1, &[]).unwrap_err().contains("from 1 to"));
        assert!(encode_rgba(1, 0, &[]).unwrap_err().contains("from 1 to"));
        assert!(encode_rgba(1 << 31, 1, &[])
            .unwrap_err()
            .contains("from 1 to"));
        let e = encode_rgba(2, 2, &[0; 15]).unwrap_err();
        assert!(
            e.contains("15 bytes of pixels for a 2 x 2 RGBA image, which needs 16"),
            "{e}"
        );
    }
}
