//! The codecs chunkwise registers with `zarrs` for what its pure-Rust build does not decode:
//! `blosc` (Blosc1 chunks, through [`crate::codec::blosc2`]), `zstd` (through `ruzstd`),
//! numcodecs `lz4` and numcodecs `delta`. `zarrs` itself runs the codec chain, `bytes`,
//! `transpose`, `gzip`, `zlib`, `crc32c` and `sharding_indexed`.
//!
//! `zarrs`' own `blosc` and `zstd` codecs wrap C libraries (blosc-src, zstd-sys) that need
//! clang and a C sysroot to build for wasm32; these decoders need neither. They decode only
//! (chunkwise never writes Zarr) and check every output size against the chunk's decoded
//! size, so a chunk shorter or longer than its codecs say is an error, never wrong data.
//!
//! Delta (numcodecs `Delta`, a v2 filter) is registered as a bytes-to-bytes codec: zarrs
//! keeps a v2 filter ahead of the compressor in the chain, so it undoes it on the stored
//! element bytes (in the filter's own `dtype` byte order) after decompression, before the
//! `bytes` codec: the running sum numcodecs defines.

use crate::codec::blosc2;
use crate::dtype::{ByteOrder, DType, Kind};
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
use zarrs::plugin::{ExtensionName, PluginCreateError, ZarrVersion};

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
    Lz4,
    Delta(DType),
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

fn zstd(data: &[u8], limit: usize) -> Result<Vec<u8>, CodecError> {
    // ruzstd reserves the declared window before decoding: refuse windows far beyond the chunk.
    let window = blosc2::zstd_window(data).ok_or_else(|| other("zstd frame header invalid"))?;
    let bound = (limit.next_power_of_two() * 2).max(1 << 20) as u64;
    if window > bound {
        return Err(other(format!(
            "zstd window {window} bytes for a {limit}-byte chunk"
        )));
    }
    let mut out = vec![0u8; limit];
    let mut dec = ruzstd::decoding::FrameDecoder::new();
    let n = dec
        .decode_all(data, &mut out)
        .map_err(|e| other(format!("zstd: {e}")))?;
    out.truncate(n);
    Ok(out)
}

/// Undoes numcodecs `Delta` in place: a running sum in the element type (integers wrap).
fn undelta(dtype: &DType, data: &mut [u8]) -> Result<(), CodecError> {
    let n = dtype.itemsize;
    if !data.len().is_multiple_of(n) {
        return Err(other(format!(
            "delta: {} bytes are not whole {n}-byte elements",
            data.len()
        )));
    }
    let be = dtype.order == ByteOrder::Big;
    macro_rules! run {
        ($t:ty, $add:expr) => {{
            let get = |b: &[u8]| -> $t {
                let a: [u8; std::mem::size_of::<$t>()] = b.try_into().expect("item size");
                if be {
                    <$t>::from_be_bytes(a)
                } else {
                    <$t>::from_le_bytes(a)
                }
            };
            let mut acc: Option<$t> = None;
            for c in data.chunks_exact_mut(n) {
                let v = get(c);
                let s = match acc {
                    None => v,
                    Some(a) => $add(a, v),
                };
                acc = Some(s);
                c.copy_from_slice(&if be { s.to_be_bytes() } else { s.to_le_bytes() });
            }
        }};
    }
    match (dtype.kind, n) {
        (Kind::Int | Kind::UInt | Kind::Bool, 1) => run!(u8, u8::wrapping_add),
        (Kind::Int | Kind::UInt, 2) => run!(u16, u16::wrapping_add),
        (Kind::Int | Kind::UInt, 4) => run!(u32, u32::wrapping_add),
        (Kind::Int | Kind::UInt, 8) => run!(u64, u64::wrapping_add),
        (Kind::Float, 4) => run!(f32, |a: f32, b: f32| a + b),
        (Kind::Float, 8) => run!(f64, |a: f64, b: f64| a + b),
        _ => return Err(other(format!("delta of {dtype} elements"))),
    }
    Ok(())
}

impl OwnCodec {
    fn decode_vec(&self, data: &[u8], limit: usize) -> Result<Vec<u8>, CodecError> {
        let out = match self.kind {
            Kind2::Blosc => {
                let h =
                    blosc2::ChunkHeader::parse(data).map_err(|e| other(format!("blosc: {e}")))?;
                if h.nbytes != limit {
                    return Err(other(format!(
                        "blosc chunk holds {} bytes, {limit} expected",
                        h.nbytes
                    )));
                }
                blosc2::decode_chunk(data).map_err(|e| other(format!("blosc: {e}")))?
            }
            Kind2::Zstd => zstd(data, limit)?,
            Kind2::Lz4 => {
                // numcodecs LZ4: u32 little-endian decoded size, then one LZ4 block.
                let n = data
                    .get(..4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                    .ok_or_else(|| other("lz4 header cut short"))?;
                if n != limit {
                    return Err(other(format!(
                        "lz4 chunk holds {n} bytes, {limit} expected"
                    )));
                }
                let mut out = vec![0u8; n];
                match blosc2::lz4::decompress(&data[4..], &mut out) {
                    Some(k) if k == n => out,
                    _ => return Err(other("lz4 block invalid or cut short")),
                }
            }
            Kind2::Delta(dtype) => {
                let mut out = data.to_vec();
                undelta(&dtype, &mut out)?;
                out
            }
        };
        if out.len() != limit {
            return Err(other(format!(
                "decoded {} bytes, {limit} expected",
                out.len()
            )));
        }
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
        let limit = decoded_representation
            .size()
            .ok_or_else(|| other("decoded size unknown"))?;
        let limit = usize::try_from(limit).map_err(|_| other("decoded size too large"))?;
        Ok(Cow::Owned(self.decode_vec(&encoded_value, limit)?))
    }

    fn encoded_representation(
        &self,
        _decoded_representation: &BytesRepresentation,
    ) -> BytesRepresentation {
        BytesRepresentation::UnboundedSize
    }
}

fn delta_dtype(metadata: &MetadataV3) -> Result<DType, PluginCreateError> {
    #[derive(serde::Deserialize)]
    struct DeltaConfiguration {
        dtype: String,
        astype: Option<String>,
    }
    let c: DeltaConfiguration = metadata.to_typed_configuration()?;
    if c.astype.as_ref().is_some_and(|a| *a != c.dtype) {
        return Err(PluginCreateError::Other(format!(
            "delta with astype {:?} other than dtype {:?}",
            c.astype, c.dtype
        )));
    }
    let d = DType::parse(&c.dtype).map_err(|e| PluginCreateError::Other(e.to_string()))?;
    if !matches!(d.kind, Kind::Int | Kind::UInt | Kind::Float | Kind::Bool) {
        return Err(PluginCreateError::Other(format!("delta of {d} elements")));
    }
    Ok(d)
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
own_codec!(Lz4Plugin, v3: "numcodecs.lz4", [], v2: "lz4", |_| Ok(Kind2::Lz4));
own_codec!(DeltaPlugin, v3: "numcodecs.delta", [], v2: "delta", |m| Ok(
    Kind2::Delta(delta_dtype(m)?)
));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_known_value() {
        // RFC 3720 B.4: 32 bytes of zeros.
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
    }

    #[test]
    fn undelta_wraps_integers() {
        let mut d = [1u8, 0, 255, 255, 2, 0];
        undelta(&DType::parse("<i2").unwrap(), &mut d).unwrap();
        assert_eq!(d, [1, 0, 0, 0, 2, 0]);
    }
}
