//! The codecs chunkwise registers with `zarrs` for what its build does not decode:
//! `blosc` (Blosc1 chunks, through [`crate::codec::blosc2`]), `zstd` (through C zstd, the
//! decoder of [`crate::codec::zstd`] that Blosc2 and HDF5 share), `gzip` and numcodecs `zlib`
//! (through zlib-rs' inflate), numcodecs `lz4` and numcodecs `delta`. `zarrs` itself runs the
//! codec chain, `bytes`, `transpose`, `crc32c` and `sharding_indexed`.
//!
//! `zarrs`' own `gzip` and `zlib` codecs (flate2) inflate with no bound (`read_to_end`: a
//! chunk of a few KB may ask for gigabytes) and bring flate2's compressors, which a reader
//! never calls, into the wasm module (about 22 KB of the gzipped module): these inflate into
//! the decoded size the codec chain gives, or at most deflate's largest expansion of the
//! stored bytes, and a gzip member's CRC-32 and length are checked (zlib-rs, as zlib's
//! `uncompress` with a gzip window).
//!
//! `zarrs`' own `blosc` codec wraps C-Blosc (blosc-src), which needs a C sysroot to build for
//! wasm32; its `zstd` codec would be a second copy of the zstd decoder, without the window
//! bound of [`crate::codec::zstd`]. These decoders decode only
//! (chunkwise never writes Zarr) and check every output size against the chunk's decoded
//! size, so a chunk shorter or longer than its codecs say is an error, never wrong data.
//!
//! Delta (numcodecs `Delta`, a v2 filter) is registered as a bytes-to-bytes codec: zarrs
//! keeps a v2 filter ahead of the compressor in the chain, so it undoes it on the stored
//! element bytes after decompression, before the `bytes` codec: the running sum numcodecs
//! defines (`Delta.decode`: `np.cumsum(enc.view(astype), out=dec)` with `dec` of `dtype`, so
//! each stored `astype` element is cast to `dtype` and summed in `dtype`; integers wrap).
//! Its stored size is its decoded size scaled by `astype`'s item size over `dtype`'s, which
//! it tells the codec after it ([`BytesToBytesCodecTraits::encoded_representation`]), so a
//! compressor that needs the decoded size (zstd, blosc, lz4) knows it.

use crate::codec::{blosc2, inflate, zstd};
use crate::dtype::{ByteOrder, DType, Kind};
use crate::formats::ChunkDecodeError;
use std::borrow::Cow;
use std::sync::Arc;
use zarrs::array::codec::api::{
    CodecPluginV2, CodecPluginV3, CodecTraitsV2, CodecTraitsV3, PartialDecoderCapability,
    PartialEncoderCapability,
};
use zarrs::array::{
    ArrayBytesRaw, BytesRepresentation, BytesToBytesCodecTraits, Codec, CodecError,
    CodecMetadataOptions, CodecOptions, CodecTraits, RecommendedConcurrency,
};
use zarrs::metadata::v2::MetadataV2;
use zarrs::metadata::v3::MetadataV3;
use zarrs::metadata::Configuration;
use zarrs::plugin::{ExtensionName, PluginCreateError, PluginUnsupportedError, ZarrVersion};

/// CRC-32C (Castagnoli) of `data`, as the v3 `crc32c` codec stores it (RFC 3720 appendix
/// B.4); the sum `zarrs` checks.
pub fn crc32c(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0x82F6_3B78
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    let mut c = !0u32;
    for &b in data {
        c = t[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// Which of chunkwise's decoders a registered codec is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind2 {
    Blosc,
    Zstd,
    /// RFC 1952 gzip member (Zarr v3 `gzip`, numcodecs `GZip`).
    Gzip,
    /// RFC 1950 zlib stream (numcodecs `Zlib`).
    Zlib,
    Lz4,
    /// numcodecs `Delta`: the array's element type `dtype` and the stored `astype`.
    Delta {
        dtype: DType,
        astype: DType,
    },
}

/// A decode-only bytes-to-bytes codec backed by chunkwise's decoders.
#[derive(Debug, Clone)]
struct OwnCodec {
    kind: Kind2,
    /// The name it was registered under in the metadata (`blosc`, `numcodecs.lz4`, ...).
    name: String,
    configuration: Configuration,
}

impl ExtensionName for OwnCodec {
    fn name(&self, _version: ZarrVersion) -> Option<Cow<'static, str>> {
        Some(Cow::Owned(self.name.clone()))
    }
}

fn other(detail: impl Into<String>) -> CodecError {
    CodecError::Other(detail.into())
}

/// A Blosc chunk's error as a `zarrs` [`CodecError`] that keeps it typed: `zarrs` has no
/// variant for a codec's own error type, so it travels as `CodecError::IOError` around an
/// [`std::io::Error`] holding our [`ChunkDecodeError`] (same text, "blosc: ..."), which
/// [`crate::formats::zarr`] takes back out by downcasting (`zarr_codec_error`).
fn blosc(source: blosc2::CodecError) -> CodecError {
    CodecError::IOError(Arc::new(std::io::Error::other(
        ChunkDecodeError::ZarrBlosc(source),
    )))
}

/// Largest zstd window accepted whatever the chunk size (bytes): what libzstd's streaming
/// compressor declares at levels up to 19 when it does not know the content size (window
/// log 23), as frames without a content-size field carry.
const ZSTD_STREAM_WINDOW: usize = 8 << 20;

/// What a codec knows of the size it decodes to, from the codec chain (`zarrs`'
/// [`BytesRepresentation`]): exact for a chunk, at most a bound, or nothing (the outer codec
/// of a shard).
#[derive(Clone, Copy, Debug)]
enum DecodedSize {
    Exact(usize),
    AtMost(usize),
    Unknown,
}

impl DecodedSize {
    /// The largest size accepted: the bound, or [`super::MAX_CHUNK_BYTES`] when unknown.
    fn limit(self) -> usize {
        match self {
            DecodedSize::Exact(n) | DecodedSize::AtMost(n) => n,
            DecodedSize::Unknown => super::MAX_CHUNK_BYTES as usize,
        }
    }

    /// Checks a size a frame or chunk header declares.
    fn check(self, what: &str, n: usize) -> Result<(), CodecError> {
        let ok = match self {
            DecodedSize::Exact(m) => n == m,
            _ => n <= self.limit(),
        };
        if ok {
            Ok(())
        } else {
            Err(other(format!(
                "{what} holds {n} bytes, {} expected",
                match self {
                    DecodedSize::Exact(m) => m.to_string(),
                    _ => format!("at most {}", self.limit()),
                }
            )))
        }
    }
}

/// Decodes one zstd frame to `size`, whether or not its header carries its content size;
/// where `size` is [`DecodedSize::Unknown`] the header must carry it.
fn zstd(data: &[u8], size: DecodedSize) -> Result<Vec<u8>, CodecError> {
    let declared = zstd::zstd_content_size(data);
    let n = match (size, declared) {
        (DecodedSize::Exact(n), _) => n,
        (_, Some(d)) => {
            let d = usize::try_from(d).map_err(|_| other("zstd content size too large"))?;
            size.check("zstd frame", d)?;
            d
        }
        (DecodedSize::AtMost(n), None) => n,
        (DecodedSize::Unknown, None) => {
            return Err(other(
                "zstd frame without a content size where the codec chain bounds no size",
            ))
        }
    };
    // Windows far beyond both the chunk and a streaming writer's default are refused; C zstd
    // decodes into `out` and never past it (`crate::codec::zstd`).
    let mut out = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| other(format!("cannot allocate {n} bytes for a zstd chunk")))?;
    out.resize(n, 0);
    let got = zstd::Decoder::default()
        .decompress(data, &mut out, ZSTD_STREAM_WINDOW)
        .map_err(other)?;
    out.truncate(got);
    Ok(out)
}

/// Inflates one zlib stream (`window_bits` 15) or the gzip members of a chunk (31: each
/// member's CRC-32 and length are checked; members follow one another as RFC 1952 section 2.2
/// allows and Python's `gzip`, numcodecs' `GZip`, reads them) into at most the size the codec
/// chain allows, and never into more than deflate's largest expansion of `data`: a small
/// chunk cannot make it allocate much. Bytes after the stream (after the last member) are
/// ignored. Errors name what is wrong: more output than allowed, a stream cut short, or
/// zlib's reason (a check value that does not match, a bad block, ...). zlib-rs on every
/// target, not [`inflate::Inflater`] (miniz_oxide natively), for its gzip wrapper: the
/// member's header, CRC-32 and length.
fn inflate_chunk(data: &[u8], size: DecodedSize, window_bits: u8) -> Result<Vec<u8>, CodecError> {
    let what = if window_bits > 15 { "gzip" } else { "zlib" };
    let cap = match size {
        DecodedSize::Exact(n) => n,
        _ => size
            .limit()
            .min(data.len().saturating_mul(inflate::MAX_EXPANSION)),
    };
    let mut out = Vec::new();
    out.try_reserve_exact(cap)
        .map_err(|_| other(format!("cannot allocate {cap} bytes for a {what} chunk")))?;
    out.resize(cap, 0);
    let finish = zlib_rs::InflateFlush::Finish;
    let (mut read, mut written) = (0, 0);
    loop {
        let mut z = zlib_rs::Inflate::new(true, window_bits);
        let mut status = z.decompress(&data[read..], &mut out[written..], finish);
        if written + z.total_out() as usize == cap && status.is_ok() {
            // The output is full before the stream's end: one more byte of room tells a
            // stream that decodes to more from one cut short.
            if !matches!(status, Ok(zlib_rs::Status::StreamEnd)) {
                let rest = &data[(read + z.total_in() as usize).min(data.len())..];
                let before = z.total_out();
                status = z.decompress(rest, &mut [0u8; 1], finish);
                if z.total_out() > before {
                    return Err(other(format!(
                        "{what} stream decodes to more than {}",
                        match size {
                            DecodedSize::Exact(m) => format!("the {m} bytes expected"),
                            _ => format!("{cap} bytes"),
                        }
                    )));
                }
            }
        }
        match status {
            Ok(zlib_rs::Status::StreamEnd) => {}
            Ok(_) => return Err(other(format!("{what} stream cut short"))),
            Err(e) => {
                let why = z.error_message().unwrap_or(e.as_str());
                return Err(other(format!("{what} stream invalid: {why}")));
            }
        }
        read = (read + z.total_in() as usize).min(data.len());
        written += z.total_out() as usize;
        if !(what == "gzip" && data[read..].starts_with(&[0x1f, 0x8b])) {
            break;
        }
    }
    out.truncate(written);
    Ok(out)
}

/// One element of a numcodecs `Delta` stream, widened: integers to 64 bits (sign- or
/// zero-extended, so the low bits are the value's), floats to `f64`.
#[derive(Clone, Copy)]
enum Wide {
    Int(u64),
    Float(f64),
}

fn read_wide(t: &DType, b: &[u8]) -> Wide {
    let mut a = [0u8; 8];
    let n = t.itemsize;
    if t.order == ByteOrder::Big {
        a[..n].copy_from_slice(b);
        a[..n].reverse();
    } else {
        a[..n].copy_from_slice(b);
    }
    match t.kind {
        Kind::Float if n == 4 => Wide::Float(f32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64),
        Kind::Float => Wide::Float(f64::from_le_bytes(a)),
        Kind::Int if n < 8 && a[n - 1] & 0x80 != 0 => {
            a[n..].fill(0xff);
            Wide::Int(u64::from_le_bytes(a))
        }
        _ => Wide::Int(u64::from_le_bytes(a)),
    }
}

fn write_wide(t: &DType, v: Wide, out: &mut [u8]) {
    let n = t.itemsize;
    let le: [u8; 8] = match v {
        Wide::Int(x) => x.to_le_bytes(),
        Wide::Float(x) if n == 4 => {
            let f = (x as f32).to_le_bytes();
            [f[0], f[1], f[2], f[3], 0, 0, 0, 0]
        }
        Wide::Float(x) => x.to_le_bytes(),
    };
    out.copy_from_slice(&le[..n]);
    if t.order == ByteOrder::Big {
        out.reverse();
    }
}

/// Whether numcodecs `Delta(dtype, astype)` decodes here: integer (or bool) elements stored
/// as integers, float elements stored as floats or integers, of 1, 2, 4 or 8 bytes (floats 4
/// or 8). Integer elements stored as floats would need numpy's float-to-integer cast.
fn delta_supported(dtype: &DType, astype: &DType) -> bool {
    let int = |t: &DType| matches!(t.kind, Kind::Int | Kind::UInt | Kind::Bool);
    let size_ok = |t: &DType| match t.kind {
        Kind::Float => matches!(t.itemsize, 4 | 8),
        _ => matches!(t.itemsize, 1 | 2 | 4 | 8),
    };
    size_ok(dtype)
        && size_ok(astype)
        && (int(dtype) && int(astype)
            || dtype.kind == Kind::Float && (int(astype) || astype.kind == Kind::Float))
}

/// Undoes numcodecs `Delta(dtype, astype)`: `data` holds `astype` elements; returns their
/// running sum as `dtype` elements, each element cast to `dtype` before it is added and the
/// sum kept in `dtype` (integers wrap), as `np.cumsum(enc, out=dec)` computes it.
fn undelta(dtype: &DType, astype: &DType, data: &[u8]) -> Result<Vec<u8>, CodecError> {
    let (n, m) = (astype.itemsize, dtype.itemsize);
    if !data.len().is_multiple_of(n) {
        return Err(other(format!(
            "delta: {} bytes are not whole {n}-byte elements",
            data.len()
        )));
    }
    if !delta_supported(dtype, astype) {
        return Err(other(format!(
            "delta of {dtype} elements stored as {astype}"
        )));
    }
    let mut out = vec![0u8; data.len() / n * m];
    let float = dtype.kind == Kind::Float;
    let single = m == 4;
    let (mut ai, mut af32, mut af64) = (0u64, 0f32, 0f64);
    for (i, (c, o)) in data
        .chunks_exact(n)
        .zip(out.chunks_exact_mut(m))
        .enumerate()
    {
        let v = read_wide(astype, c);
        let s = if float {
            // Cast to the element type, then add in it (f32 sums stay f32).
            let x = match v {
                Wide::Int(x) if astype.kind == Kind::Int => x as i64 as f64,
                Wide::Int(x) => x as f64,
                Wide::Float(x) => x,
            };
            if single {
                let x = x as f32;
                af32 = if i == 0 { x } else { af32 + x };
                Wide::Float(af32 as f64)
            } else {
                af64 = if i == 0 { x } else { af64 + x };
                Wide::Float(af64)
            }
        } else {
            let Wide::Int(x) = v else {
                unreachable!("integer astype checked")
            };
            ai = if i == 0 { x } else { ai.wrapping_add(x) };
            Wide::Int(ai)
        };
        write_wide(dtype, s, o);
    }
    Ok(out)
}

impl OwnCodec {
    fn decode_vec(&self, data: &[u8], size: DecodedSize) -> Result<Vec<u8>, CodecError> {
        let out = match self.kind {
            Kind2::Blosc => {
                let h = blosc2::ChunkHeader::parse(data).map_err(blosc)?;
                size.check("blosc chunk", h.nbytes)?;
                blosc2::decode_chunk(data).map_err(blosc)?
            }
            Kind2::Zstd => zstd(data, size)?,
            Kind2::Gzip => inflate_chunk(data, size, 16 + 15)?,
            Kind2::Zlib => inflate_chunk(data, size, 15)?,
            Kind2::Lz4 => {
                // numcodecs LZ4: u32 little-endian decoded size, then one LZ4 block.
                let n = data
                    .get(..4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                    .ok_or_else(|| other("lz4 header cut short"))?;
                size.check("lz4 chunk", n)?;
                let mut out = vec![0u8; n];
                match blosc2::lz4::decompress(&data[4..], &mut out) {
                    Some(k) if k == n => out,
                    _ => return Err(other("lz4 block invalid or cut short")),
                }
            }
            Kind2::Delta { dtype, astype } => {
                // One stored element per element: the decoded size follows from the stored.
                if !data.len().is_multiple_of(astype.itemsize) {
                    return Err(other(format!(
                        "delta: {} stored bytes, not whole {astype} elements",
                        data.len()
                    )));
                }
                size.check("delta", data.len() / astype.itemsize * dtype.itemsize)?;
                undelta(&dtype, &astype, data)?
            }
        };
        size.check("the decoded chunk", out.len())?;
        Ok(out)
    }
}

impl CodecTraits for OwnCodec {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn configuration(
        &self,
        _version: ZarrVersion,
        _options: &CodecMetadataOptions,
    ) -> Option<Configuration> {
        Some(self.configuration.clone())
    }

    fn partial_decoder_capability(&self) -> PartialDecoderCapability {
        PartialDecoderCapability {
            partial_read: false,
            partial_decode: false,
        }
    }

    fn partial_encoder_capability(&self) -> PartialEncoderCapability {
        PartialEncoderCapability {
            partial_encode: false,
        }
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
impl BytesToBytesCodecTraits for OwnCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn BytesToBytesCodecTraits> {
        self as Arc<dyn BytesToBytesCodecTraits>
    }

    fn recommended_concurrency(
        &self,
        _decoded_representation: &BytesRepresentation,
    ) -> Result<RecommendedConcurrency, CodecError> {
        Ok(RecommendedConcurrency::new_maximum(1))
    }

    fn encode<'a>(
        &self,
        _decoded_value: ArrayBytesRaw<'a>,
        _options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        Err(other("chunkwise decodes Zarr chunks only"))
    }

    fn decode<'a>(
        &self,
        encoded_value: ArrayBytesRaw<'a>,
        decoded_representation: &BytesRepresentation,
        _options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        let fits = |n: u64| usize::try_from(n).map_err(|_| other("decoded size too large"));
        let size = match decoded_representation {
            BytesRepresentation::FixedSize(n) => DecodedSize::Exact(fits(*n)?),
            BytesRepresentation::BoundedSize(n) => DecodedSize::AtMost(fits(*n)?),
            BytesRepresentation::UnboundedSize => DecodedSize::Unknown,
        };
        Ok(Cow::Owned(self.decode_vec(&encoded_value, size)?))
    }

    /// Delta keeps one stored element per element: its stored size follows from the decoded
    /// one (scaled by the item sizes), and the codec after it learns it. The compressors'
    /// stored sizes are unknown.
    fn encoded_representation(
        &self,
        decoded_representation: &BytesRepresentation,
    ) -> BytesRepresentation {
        match (self.kind, decoded_representation) {
            (Kind2::Delta { dtype, astype }, BytesRepresentation::FixedSize(n)) => {
                BytesRepresentation::FixedSize(n / dtype.itemsize as u64 * astype.itemsize as u64)
            }
            (Kind2::Delta { dtype, astype }, BytesRepresentation::BoundedSize(n)) => {
                BytesRepresentation::BoundedSize(
                    n / dtype.itemsize as u64 * astype.itemsize.max(dtype.itemsize) as u64,
                )
            }
            _ => BytesRepresentation::UnboundedSize,
        }
    }
}

/// The `dtype` and `astype` of a numcodecs `Delta` configuration (`astype` defaults to
/// `dtype`).
///
/// # Errors
/// A configuration that is not numcodecs' is invalid; a pair of types chunkwise does not
/// decode (integers stored as floats, other kinds) is [`PluginCreateError::Unsupported`],
/// naming the filter.
fn delta_types(metadata: &MetadataV3) -> Result<Kind2, PluginCreateError> {
    #[derive(serde::Deserialize)]
    struct DeltaConfiguration {
        dtype: String,
        astype: Option<String>,
    }
    let c: DeltaConfiguration = metadata.to_typed_configuration()?;
    let parse = |t: &str| {
        DType::parse(t).map_err(|e| {
            PluginCreateError::Unsupported(PluginUnsupportedError::new(
                format!("numcodecs.delta (dtype {t:?}: {e})"),
                "codec".into(),
            ))
        })
    };
    let dtype = parse(&c.dtype)?;
    let astype = match &c.astype {
        Some(a) => parse(a)?,
        None => dtype,
    };
    if !delta_supported(&dtype, &astype) {
        return Err(PluginCreateError::Unsupported(PluginUnsupportedError::new(
            format!("numcodecs.delta of {dtype} elements stored as {astype}"),
            "codec".into(),
        )));
    }
    Ok(Kind2::Delta { dtype, astype })
}

fn own_codec(kind: Kind2, name: &str, configuration: Configuration) -> Codec {
    Codec::BytesToBytes(Arc::new(OwnCodec {
        kind,
        name: name.to_string(),
        configuration,
    }))
}

/// Declares one registered codec: its Zarr v3 name and aliases, its Zarr v2 (numcodecs)
/// id, and how its configuration makes a decoder. The v2 plugin is what `zarrs` converts
/// v2 metadata with (it names the codec by its v3 name and keeps the v2 configuration);
/// the v3 plugin builds the decoder from either.
macro_rules! own_codec {
    ($ty:ident, v3: $v3:expr, [$($alias:expr),*], v2: $v2:expr, $kind:expr) => {
        #[derive(Debug)]
        struct $ty;
        zarrs::plugin::impl_extension_aliases!($ty, v3: $v3, [$($alias),*], v2: $v2);
        impl CodecTraitsV3 for $ty {
            fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
                let make: fn(&MetadataV3) -> Result<Kind2, PluginCreateError> = $kind;
                Ok(own_codec(
                    make(metadata)?,
                    $v3,
                    metadata.configuration().cloned().unwrap_or_default(),
                ))
            }
        }
        impl CodecTraitsV2 for $ty {
            fn create(metadata: &MetadataV2) -> Result<Codec, PluginCreateError> {
                <$ty as CodecTraitsV3>::create(&MetadataV3::new_with_configuration(
                    $v3,
                    metadata.configuration().clone(),
                ))
            }
        }
        inventory::submit! { CodecPluginV3::new::<$ty>() }
        inventory::submit! { CodecPluginV2::new::<$ty>() }
    };
}

own_codec!(BloscPlugin, v3: "blosc", ["numcodecs.blosc"], v2: "blosc", |_| Ok(Kind2::Blosc));
own_codec!(ZstdPlugin, v3: "zstd", ["numcodecs.zstd"], v2: "zstd", |_| Ok(Kind2::Zstd));
own_codec!(GzipPlugin, v3: "gzip", [], v2: "gzip", |_| Ok(Kind2::Gzip));
own_codec!(ZlibPlugin, v3: "numcodecs.zlib", [], v2: "zlib", |_| Ok(Kind2::Zlib));
own_codec!(Lz4Plugin, v3: "numcodecs.lz4", [], v2: "lz4", |_| Ok(Kind2::Lz4));
own_codec!(DeltaPlugin, v3: "numcodecs.delta", [], v2: "delta", delta_types);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_known_value() {
        // RFC 3720 B.4: 32 bytes of zeros.
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
    }

    /// A gzip member (`window_bits` 31) or zlib stream (15) of `data`, by zlib-rs' deflate.
    fn deflated(data: &[u8], window_bits: i32) -> Vec<u8> {
        let mut out = vec![0u8; data.len() + data.len() / 100 + 64];
        let config = zlib_rs::DeflateConfig {
            window_bits,
            ..zlib_rs::DeflateConfig::new(6)
        };
        let (done, rc) = zlib_rs::compress_slice(&mut out, data, config);
        assert_eq!(rc, zlib_rs::ReturnCode::Ok);
        done.to_vec()
    }

    #[test]
    fn gzip_and_zlib_inflate_into_the_decoded_size_and_no_further() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for (bits, kind) in [(31, Kind2::Gzip), (15, Kind2::Zlib)] {
            let codec = OwnCodec {
                kind,
                name: "test".into(),
                configuration: Configuration::default(),
            };
            let z = deflated(&data, bits);
            for size in [
                DecodedSize::Exact(data.len()),
                DecodedSize::AtMost(data.len() + 1),
                DecodedSize::Unknown,
            ] {
                assert_eq!(
                    codec.decode_vec(&z, size).unwrap(),
                    data,
                    "{kind:?} {size:?}"
                );
            }
            let e = codec.decode_vec(&z, DecodedSize::Exact(4096)).unwrap_err();
            assert!(
                e.to_string().contains("more than the 4096 bytes expected"),
                "{e}"
            );
            let e = codec
                .decode_vec(&z, DecodedSize::Exact(data.len() + 1))
                .unwrap_err();
            assert!(e.to_string().contains("100001"), "{e}");
            assert!(codec
                .decode_vec(&z[..z.len() / 2], DecodedSize::Unknown)
                .is_err());
            assert!(codec
                .decode_vec(b"not deflate at all", DecodedSize::Unknown)
                .is_err());
        }
        // A gzip member's CRC-32 is checked (its last 8 bytes: CRC-32, then length), and the
        // error says so.
        let mut z = deflated(&data, 31);
        let at = z.len() - 8;
        z[at] ^= 1;
        let e = inflate_chunk(&z, DecodedSize::Exact(data.len()), 31).unwrap_err();
        assert!(
            e.to_string()
                .contains("gzip stream invalid: incorrect data check"),
            "{e}"
        );
        // A stream cut inside its trailer, with the output full, is cut short (not "more").
        for (bits, what) in [(31, "gzip"), (15, "zlib")] {
            let z = deflated(&data, bits);
            let e = inflate_chunk(
                &z[..z.len() - 2],
                DecodedSize::Exact(data.len()),
                bits as u8,
            );
            let e = e.unwrap_err().to_string();
            assert!(e.contains(&format!("{what} stream cut short")), "{e}");
        }
        // The other format's stream is refused.
        assert!(inflate_chunk(&deflated(&data, 15), DecodedSize::Unknown, 31).is_err());
    }

    #[test]
    fn gzip_members_follow_one_another() {
        // Two members (RFC 1952 2.2: a gzip file is a series of members), as Python's gzip
        // reads them: the chunk is both members' contents, in order. An empty member too.
        let data: Vec<u8> = (0..50_000u32).map(|i| (i * 13 % 241) as u8).collect();
        let mut z = deflated(&data[..20_000], 31);
        z.extend(deflated(&[], 31));
        z.extend(deflated(&data[20_000..], 31));
        assert_eq!(
            inflate_chunk(&z, DecodedSize::Exact(data.len()), 31).unwrap(),
            data
        );
        assert_eq!(inflate_chunk(&z, DecodedSize::Unknown, 31).unwrap(), data);
        // Two members holding more than the chunk: refused, not cut to size.
        let e = inflate_chunk(&z, DecodedSize::Exact(30_000), 31).unwrap_err();
        assert!(
            e.to_string().contains("more than the 30000 bytes expected"),
            "{e}"
        );
        // Bytes after the last member that start no member are ignored, as before.
        z.extend_from_slice(b"\0\0trailing");
        assert_eq!(
            inflate_chunk(&z, DecodedSize::Exact(data.len()), 31).unwrap(),
            data
        );
        // zlib has no members: a second stream after the first is not read.
        let mut y = deflated(&data[..20_000], 15);
        y.extend(deflated(&data[20_000..], 15));
        assert_eq!(
            inflate_chunk(&y, DecodedSize::Unknown, 15).unwrap(),
            &data[..20_000]
        );
    }

    #[test]
    fn a_gzip_bomb_is_refused_at_the_bound() {
        // 16 MiB of zeros deflate to about 16 KB: where the codec chain bounds the chunk to
        // 1 MiB, the inflater stops there; where it bounds nothing, at 1032 x the stored size.
        let zeros = vec![0u8; 16 << 20];
        let z = deflated(&zeros, 31);
        assert!(z.len() < 32 << 10, "{} stored bytes", z.len());
        let e = inflate_chunk(&z, DecodedSize::AtMost(1 << 20), 31).unwrap_err();
        assert!(e.to_string().contains("more than 1048576 bytes"), "{e}");
        let small = deflated(&zeros[..4 << 20], 31);
        let e = inflate_chunk(&small[..], DecodedSize::Unknown, 31);
        assert_eq!(
            e.unwrap().len(),
            4 << 20,
            "within 1032 x its {} bytes",
            small.len()
        );
    }

    #[test]
    fn undelta_wraps_integers() {
        let t = DType::parse("<i2").unwrap();
        let d = undelta(&t, &t, &[1u8, 0, 255, 255, 2, 0]).unwrap();
        assert_eq!(d, [1, 0, 0, 0, 2, 0]);
    }

    #[test]
    fn undelta_casts_astype_to_dtype() {
        // int8 steps of -1 (0xff) into int16: sign-extended, then summed in int16.
        let d = undelta(
            &DType::parse("<i2").unwrap(),
            &DType::parse("|i1").unwrap(),
            &[5, 0xff, 0xff],
        )
        .unwrap();
        assert_eq!(d, [5, 0, 4, 0, 3, 0]);
        // uint8 200s into big-endian int16: zero-extended.
        let d = undelta(
            &DType::parse(">i2").unwrap(),
            &DType::parse("|u1").unwrap(),
            &[200, 200],
        )
        .unwrap();
        assert_eq!(d, [0, 200, 1, 144]);
        // float32 steps summed in float64.
        let f: Vec<u8> = [0.5f32, 0.25]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let d = undelta(
            &DType::parse("<f8").unwrap(),
            &DType::parse("<f4").unwrap(),
            &f,
        )
        .unwrap();
        assert_eq!(
            d,
            [0.5f64, 0.75]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<_>>()
        );
        assert!(!delta_supported(
            &DType::parse("<i4").unwrap(),
            &DType::parse("<f4").unwrap()
        ));
    }
}
