//! Previews: a 2-D numeric selection rendered through a colour map into a PNG file, the same
//! picture on every host (`chunkwise preview`, JS `renderPng`, the edge service's
//! `/v1/preview.png`).
//!
//! The rule, as the preview page (`www/plot.js`, `www/colormaps.js`) and matplotlib's
//! `imshow` apply it: each value v becomes t = (v - vmin) / (vmax - vmin) (0.5 when
//! vmax <= vmin, so constant data takes the middle of the map; the same ratio of halved
//! values when vmax - vmin overflows a double), t picks the entry
//! [`colormap::lut_index`] of the map (clamped at its ends) and the pixel is that colour,
//! opaque. NaN and infinite values are transparent pixels (RGBA 0, 0, 0, 0). vmin and vmax
//! default to the smallest and largest finite value. Row 0 of the array is the top row of the
//! image, column 0 its left column.

pub mod colormap;
pub mod png;

pub use colormap::Colormap;

use crate::dtype::{ByteOrder, DType, Kind};

/// Pixel limit of a preview when the caller names none: 4096 x 4096 (16,777,216 pixels, a
/// 64 MiB RGBA buffer before compression).
pub const DEFAULT_MAX_PIXELS: u64 = 4096 * 4096;

/// How to render: colour map, value range, pixel limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RenderOptions {
    /// The colour map (default viridis).
    pub cmap: Colormap,
    /// Value at the map's first entry; `None`: the smallest finite value.
    pub vmin: Option<f64>,
    /// Value at the map's last entry; `None`: the largest finite value.
    pub vmax: Option<f64>,
    /// Largest image allowed, in pixels (rows x columns); default [`DEFAULT_MAX_PIXELS`].
    pub max_pixels: u64,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            cmap: Colormap::Viridis,
            vmin: None,
            vmax: None,
            max_pixels: DEFAULT_MAX_PIXELS,
        }
    }
}

/// Why a preview was refused. Codes ([`crate::Error::code`]): `INVALID_SELECTION` for
/// [`RenderError::TooManyPixels`] and [`RenderError::TooLong`] (the code of every size limit,
/// as a read over its result limit), `INVALID_ARGUMENT` for the rest.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// The shape is not 2-D once its size-1 dimensions are dropped.
    #[error("a preview needs a 2-D selection (size-1 dimensions aside); shape {shape:?} is {rank}-D after dropping them")]
    Rank {
        /// The shape given.
        shape: Vec<u64>,
        /// Its rank without size-1 dimensions.
        rank: usize,
    },
    /// A dimension of size zero: no pixel to show.
    #[error("a preview needs at least one row and one column; shape {shape:?} is empty")]
    Empty {
        /// The shape given.
        shape: Vec<u64>,
    },
    /// The image has more pixels than the limit.
    #[error("a preview of {rows} x {cols} = {pixels} pixels exceeds the limit of {limit} pixels (maxPixels, --max-pixels)")]
    TooManyPixels {
        /// Image rows.
        rows: u64,
        /// Image columns.
        cols: u64,
        /// rows x columns.
        pixels: u128,
        /// The limit in force.
        limit: u64,
    },
    /// A side longer than a PNG image has (2^31 - 1 rows or columns, PNG 1.2 section 11.2.2),
    /// whatever the pixel limit.
    #[error("a preview of {rows} x {cols} pixels: a PNG image has at most 2147483647 rows and 2147483647 columns")]
    TooLong {
        /// Image rows.
        rows: u64,
        /// Image columns.
        cols: u64,
    },
    /// A dtype that has no single real value per element.
    #[error("a preview shows numbers and bools; dtype {dtype} is not one")]
    DType {
        /// The dtype given.
        dtype: String,
    },
    /// Data whose length does not match the shape and dtype.
    #[error("{got} bytes of data for shape {shape:?} of {dtype}, which needs {expected}")]
    Length {
        /// The shape given.
        shape: Vec<u64>,
        /// The dtype given.
        dtype: String,
        /// Bytes given.
        got: usize,
        /// Bytes the shape and dtype need.
        expected: u128,
    },
    /// A colour map name not in [`colormap::NAMES`].
    #[error("unknown colour map {name:?} (known: {})", colormap::NAMES.join(", "))]
    Colormap {
        /// The name given.
        name: String,
    },
    /// vmin or vmax not finite, or vmin above vmax.
    #[error("invalid value range vmin {vmin}, vmax {vmax}: both must be finite and vmin <= vmax")]
    Range {
        /// vmin given.
        vmin: f64,
        /// vmax given.
        vmax: f64,
    },
    /// The PNG encoder refused (not expected once the checks above passed).
    #[error("PNG encoding failed: {0}")]
    Encode(String),
}

impl RenderError {
    /// The stable code of this error ([`crate::Error::code`]).
    pub fn code(&self) -> &'static str {
        match self {
            RenderError::TooManyPixels { .. } | RenderError::TooLong { .. } => "INVALID_SELECTION",
            _ => "INVALID_ARGUMENT",
        }
    }
}

/// The colour map named `name` ([`colormap::NAMES`]).
///
/// # Errors
/// [`RenderError::Colormap`] listing the known names.
pub fn colormap_named(name: &str) -> Result<Colormap, RenderError> {
    Colormap::from_name(name).ok_or_else(|| RenderError::Colormap { name: name.into() })
}

/// The image size `(rows, columns)` of an array of `shape`: a 2-D shape as it is (1 x N and
/// N x 1 included), any other rank with its size-1 dimensions dropped, which must leave two.
///
/// # Errors
/// [`RenderError::Rank`] or [`RenderError::Empty`].
pub fn image_size(shape: &[u64]) -> Result<(u64, u64), RenderError> {
    if shape.contains(&0) {
        return Err(RenderError::Empty {
            shape: shape.to_vec(),
        });
    }
    let dims: Vec<u64> = if shape.len() == 2 {
        shape.to_vec()
    } else {
        shape.iter().copied().filter(|&n| n != 1).collect()
    };
    if dims.len() != 2 {
        return Err(RenderError::Rank {
            shape: shape.to_vec(),
            rank: dims.len(),
        });
    }
    Ok((dims[0], dims[1]))
}

/// Checks that the image of `shape` has at most `max_pixels` pixels, and returns its size:
/// what a caller checks before reading a selection, so that a preview too large costs no
/// request.
///
/// # Errors
/// [`RenderError::Rank`], [`RenderError::Empty`], [`RenderError::TooLong`],
/// [`RenderError::TooManyPixels`].
pub fn check_size(shape: &[u64], max_pixels: u64) -> Result<(u64, u64), RenderError> {
    let (rows, cols) = image_size(shape)?;
    let pixels = rows as u128 * cols as u128;
    // PNG's width and height are at most 2^31 - 1 (PNG 1.2, section 11.2.2).
    let side = i32::MAX as u64;
    if rows > side || cols > side {
        return Err(RenderError::TooLong { rows, cols });
    }
    if pixels > max_pixels as u128 {
        return Err(RenderError::TooManyPixels {
            rows,
            cols,
            pixels,
            limit: max_pixels,
        });
    }
    Ok((rows, cols))
}

/// The values of `data` (elements of `dtype` in C order, either byte order) as `f64`: bools
/// 0 and 1, integers converted to the nearest `f64` (exact up to 2^53), floats exactly.
///
/// # Errors
/// [`RenderError::DType`] for complex, datetime, string and record dtypes.
fn values(data: &[u8], dtype: DType) -> Result<Vec<f64>, RenderError> {
    let n = dtype.itemsize;
    let ok = matches!(
        (dtype.kind, n),
        (Kind::Bool, 1) | (Kind::Int | Kind::UInt, 1 | 2 | 4 | 8) | (Kind::Float, 2 | 4 | 8)
    );
    if !ok {
        return Err(RenderError::DType {
            dtype: dtype.to_string(),
        });
    }
    let big = dtype.order == ByteOrder::Big;
    // One loop per element width and kind, chosen once: the crate is built for size
    // (opt-level "z"), where a loop deciding the kind and width per element ran renderPng at
    // about two thirds of its speed at opt-level 3 (scripts/bench-render.mjs).
    Ok(match (dtype.kind, n) {
        (Kind::Bool, _) => data.iter().map(|&b| (b != 0) as u8 as f64).collect(),
        (Kind::UInt, 1) => data.iter().map(|&b| b as f64).collect(),
        (Kind::Int, 1) => data.iter().map(|&b| b as i8 as f64).collect(),
        (Kind::UInt, 2) => each::<2>(data, big, |b| u16::from_le_bytes(b) as f64),
        (Kind::Int, 2) => each::<2>(data, big, |b| i16::from_le_bytes(b) as f64),
        (Kind::Float, 2) => each::<2>(data, big, |b| {
            crate::element::half_to_f64(u16::from_le_bytes(b))
        }),
        (Kind::UInt, 4) => each::<4>(data, big, |b| u32::from_le_bytes(b) as f64),
        (Kind::Int, 4) => each::<4>(data, big, |b| i32::from_le_bytes(b) as f64),
        (Kind::Float, 4) => each::<4>(data, big, |b| f32::from_le_bytes(b) as f64),
        (Kind::UInt, _) => each::<8>(data, big, |b| u64::from_le_bytes(b) as f64),
        (Kind::Int, _) => each::<8>(data, big, |b| i64::from_le_bytes(b) as f64),
        _ => each::<8>(data, big, f64::from_le_bytes),
    })
}

/// `f` of each `N`-byte element of `data`, its bytes put in little-endian order first
/// (reversed when `big`).
#[inline(always)]
fn each<const N: usize>(data: &[u8], big: bool, f: impl Fn([u8; N]) -> f64) -> Vec<f64> {
    data.chunks_exact(N)
        .map(|e| {
            let mut b = [0u8; N];
            b.copy_from_slice(e);
            if big {
                b.reverse();
            }
            f(b)
        })
        .collect()
}

/// The range a preview maps: `vmin` and `vmax` as given, each missing one the smallest or
/// largest finite value (NaN both when there is none: every pixel is then transparent).
///
/// # Errors
/// [`RenderError::Range`] for a non-finite bound given, or vmin > vmax both given.
pub fn value_range(
    values: &[f64],
    vmin: Option<f64>,
    vmax: Option<f64>,
) -> Result<(f64, f64), RenderError> {
    let bad = |v: Option<f64>| v.is_some_and(|v| !v.is_finite());
    if bad(vmin) || bad(vmax) || matches!((vmin, vmax), (Some(a), Some(b)) if a > b) {
        return Err(RenderError::Range {
            vmin: vmin.unwrap_or(f64::NAN),
            vmax: vmax.unwrap_or(f64::NAN),
        });
    }
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for &v in values.iter().filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        (lo, hi) = (f64::NAN, f64::NAN);
    }
    Ok((vmin.unwrap_or(lo), vmax.unwrap_or(hi)))
}

/// The RGBA pixel of value `v` between `vmin` and `vmax` through `cmap` (the module's rule).
pub fn pixel(v: f64, vmin: f64, vmax: f64, cmap: Colormap) -> [u8; 4] {
    if !v.is_finite() {
        return [0, 0, 0, 0];
    }
    let [r, g, b] = cmap.rgb(colormap::lut_index(Scale::new(vmin, vmax).t(v)));
    [r, g, b, 255]
}

/// The module's t of a value between `vmin` and `vmax`: (v - vmin) / (vmax - vmin), 0.5 for
/// every value when vmax <= vmin (or either is NaN). When vmax - vmin overflows a double (vmin
/// -1.7e308, vmax 1.7e308), every t would be 0 (a finite difference over an infinite span):
/// the ratio is then taken on halved values, which cannot overflow and keep the ratio
/// (halving a double is exact above the subnormals). The page's `normaliser` (www/plot.js)
/// applies the same rule.
#[derive(Debug, Clone, Copy)]
struct Scale {
    /// 1, or 0.5 when the span overflows: the factor of every operand.
    h: f64,
    /// vmin x h.
    lo: f64,
    /// vmax x h - vmin x h.
    span: f64,
}

impl Scale {
    fn new(vmin: f64, vmax: f64) -> Scale {
        let h = if (vmax - vmin).is_infinite() {
            0.5
        } else {
            1.0
        };
        Scale {
            h,
            lo: vmin * h,
            span: vmax * h - vmin * h,
        }
    }

    fn t(self, v: f64) -> f64 {
        if self.span > 0.0 {
            (v * self.h - self.lo) / self.span
        } else {
            0.5
        }
    }
}

/// A rendered preview: the PNG file and what it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The PNG file (RGBA, 8 bits, [`png::encode_rgba`]).
    pub png: Vec<u8>,
    /// Image rows (the array's first kept dimension).
    pub rows: u64,
    /// Image columns (the array's second kept dimension).
    pub cols: u64,
    /// The value at the map's first entry (NaN when no value is finite and none was given).
    pub vmin: f64,
    /// The value at the map's last entry.
    pub vmax: f64,
}

/// Renders `data`, the elements of an array of `shape` and `dtype` in C order (a read's
/// result), as a PNG preview: one pixel per element (see the module doc for the rule).
///
/// # Errors
/// [`RenderError`]: shape not 2-D without its size-1 dimensions or empty, more pixels than
/// `options.max_pixels`, a dtype other than bool, integer or float, data of the wrong
/// length, a bad value range.
pub fn render_png(
    data: &[u8],
    dtype: DType,
    shape: &[u64],
    options: &RenderOptions,
) -> Result<Preview, RenderError> {
    let (rows, cols) = check_size(shape, options.max_pixels)?;
    let expected = rows as u128 * cols as u128 * dtype.itemsize as u128;
    if data.len() as u128 != expected {
        return Err(RenderError::Length {
            shape: shape.to_vec(),
            dtype: dtype.to_string(),
            got: data.len(),
            expected,
        });
    }
    let values = values(data, dtype)?;
    let (vmin, vmax) = value_range(&values, options.vmin, options.vmax)?;
    // `pixel` for each value, with the table and scale looked up once; non-finite values
    // keep the zeros (transparent).
    let (table, scale) = (options.cmap.table(), Scale::new(vmin, vmax));
    let mut rgba = vec![0u8; values.len() * 4];
    for (px, &v) in rgba.chunks_exact_mut(4).zip(&values) {
        if v.is_finite() {
            let k = 3 * colormap::lut_index(scale.t(v)) as usize;
            px.copy_from_slice(&[table[k], table[k + 1], table[k + 2], 255]);
        }
    }
    let png = png::encode_rgba(cols as u32, rows as u32, &rgba).map_err(RenderError::Encode)?;
    Ok(Preview {
        png,
        rows,
        cols,
        vmin,
        vmax,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f8(values: &[f64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// The pixels of a PNG file: (width, height, RGBA bytes).
    fn decode(png: &[u8]) -> (u32, u32, Vec<u8>) {
        let mut reader = ::png::Decoder::new(std::io::Cursor::new(png))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, ::png::ColorType::Rgba);
        assert_eq!(info.bit_depth, ::png::BitDepth::Eight);
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    #[test]
    fn exact_pixels_of_a_tiny_array() {
        // 2 x 3 float64, 0..5: vmin 0, vmax 5, t = v / 5, entry floor(t * 256) by hand:
        // 0 -> 0, 1 -> 51, 2 -> 102, 3 -> 153 (153.6), 4 -> 204 (204.8), 5 -> 255.
        // viridis entries from matplotlib's table (www/colormaps.js VIRIDIS_HEX):
        let want: [[u8; 3]; 6] = [
            [0x44, 0x01, 0x54], // 0
            [0x41, 0x44, 0x87], // 51
            [0x2a, 0x78, 0x8e], // 102
            [0x22, 0xa8, 0x84], // 153
            [0x7a, 0xd1, 0x51], // 204
            [0xfd, 0xe7, 0x25], // 255
        ];
        let dtype = DType::parse("<f8").unwrap();
        let p = render_png(
            &f8(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
            dtype,
            &[2, 3],
            &RenderOptions::default(),
        )
        .unwrap();
        assert_eq!((p.rows, p.cols, p.vmin, p.vmax), (2, 3, 0.0, 5.0));
        let (w, h, rgba) = decode(&p.png);
        assert_eq!((w, h), (3, 2), "3 columns wide, 2 rows high");
        for (i, px) in rgba.chunks_exact(4).enumerate() {
            assert_eq!(px[..3], want[i], "pixel {i}");
            assert_eq!(px[3], 255);
        }
    }

    #[test]
    fn values_of_every_kind_and_width_in_either_byte_order() {
        // (typestr, little-endian bytes of two elements, their values)
        let cases: [(&str, Vec<u8>, [f64; 2]); 12] = [
            ("|b1", vec![0, 7], [0.0, 1.0]),
            ("|u1", vec![3, 250], [3.0, 250.0]),
            ("|i1", vec![3, 250], [3.0, -6.0]),
            (
                "u2",
                [513u16, 65535]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
                [513.0, 65535.0],
            ),
            (
                "i2",
                [-300i16, 7].iter().flat_map(|v| v.to_le_bytes()).collect(),
                [-300.0, 7.0],
            ),
            (
                "f2",
                [0x3c00u16, 0xc000]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
                [1.0, -2.0],
            ),
            (
                "u4",
                [70000u32, 1].iter().flat_map(|v| v.to_le_bytes()).collect(),
                [70000.0, 1.0],
            ),
            (
                "i4",
                [-70000i32, 2]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
                [-70000.0, 2.0],
            ),
            (
                "f4",
                [1.5f32, -0.25]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
                [1.5, -0.25],
            ),
            (
                "u8",
                [1u64 << 40, 9]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
                [(1u64 << 40) as f64, 9.0],
            ),
            (
                "i8",
                [-(1i64 << 40), 9]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
                [-((1i64 << 40) as f64), 9.0],
            ),
            (
                "f8",
                [2.5f64, -1e300]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
                [2.5, -1e300],
            ),
        ];
        for (code, le, want) in cases {
            let n = le.len() / 2;
            let orders: &[&str] = if n == 1 { &[""] } else { &["<", ">"] };
            for order in orders {
                let data: Vec<u8> = if *order == ">" {
                    le.chunks(n).flat_map(|e| e.iter().rev().copied()).collect()
                } else {
                    le.clone()
                };
                let dtype = DType::parse(&format!("{order}{code}")).unwrap();
                assert_eq!(values(&data, dtype).unwrap(), want, "{order}{code}");
            }
        }
    }

    #[test]
    fn gray_of_integers_either_byte_order_and_row_zero_on_top() {
        // u16 0, 255, 510 in a column: t 0, 0.5, 1 -> entries 0, 128, 255 of gray.
        for typestr in ["<u2", ">u2"] {
            let dtype = DType::parse(typestr).unwrap();
            let data: Vec<u8> = [0u16, 255, 510]
                .iter()
                .flat_map(|v| {
                    if typestr.starts_with('>') {
                        v.to_be_bytes()
                    } else {
                        v.to_le_bytes()
                    }
                })
                .collect();
            let opts = RenderOptions {
                cmap: Colormap::Gray,
                ..Default::default()
            };
            let p = render_png(&data, dtype, &[3, 1], &opts).unwrap();
            let (w, h, rgba) = decode(&p.png);
            assert_eq!((w, h), (1, 3));
            assert_eq!(
                rgba,
                [0, 0, 0, 255, 128, 128, 128, 255, 255, 255, 255, 255],
                "{typestr}"
            );
        }
    }

    #[test]
    fn nan_and_infinities_are_transparent_and_left_out_of_the_range() {
        let dtype = DType::parse("<f8").unwrap();
        let data = f8(&[f64::NAN, 10.0, f64::INFINITY, 20.0, f64::NEG_INFINITY, 15.0]);
        let opts = RenderOptions {
            cmap: Colormap::Gray,
            ..Default::default()
        };
        let p = render_png(&data, dtype, &[3, 2], &opts).unwrap();
        assert_eq!((p.vmin, p.vmax), (10.0, 20.0));
        let (_, _, rgba) = decode(&p.png);
        let px: Vec<&[u8]> = rgba.chunks_exact(4).collect();
        for i in [0, 2, 4] {
            assert_eq!(px[i], [0, 0, 0, 0], "pixel {i} transparent");
        }
        assert_eq!(px[1], [0, 0, 0, 255]);
        assert_eq!(px[3], [255, 255, 255, 255]);
        assert_eq!(px[5], [128, 128, 128, 255]);
        // Nothing finite: all transparent, no error.
        let p = render_png(&f8(&[f64::NAN; 4]), dtype, &[2, 2], &opts).unwrap();
        assert!(p.vmin.is_nan());
        assert_eq!(decode(&p.png).2, vec![0; 16]);
    }

    #[test]
    fn vmin_vmax_clamp_and_constant_data_takes_the_middle() {
        let dtype = DType::parse("<i4").unwrap();
        let data: Vec<u8> = [-100i32, 0, 50, 100, 1000, 7]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let opts = RenderOptions {
            cmap: Colormap::Gray,
            vmin: Some(0.0),
            vmax: Some(100.0),
            ..Default::default()
        };
        let (_, _, rgba) = decode(&render_png(&data, dtype, &[2, 3], &opts).unwrap().png);
        // -100 clamps to entry 0, 1000 to 255; 50 -> t 0.5 -> 128; 7 -> floor(17.92) = 17.
        let grays: Vec<u8> = rgba.chunks_exact(4).map(|p| p[0]).collect();
        assert_eq!(grays, [0, 0, 128, 255, 255, 17]);
        // Constant data: vmin == vmax, the middle entry (128) everywhere.
        let same: Vec<u8> = [3i32; 4].iter().flat_map(|v| v.to_le_bytes()).collect();
        let (_, _, rgba) = decode(
            &render_png(&same, dtype, &[2, 2], &RenderOptions::default())
                .unwrap()
                .png,
        );
        let mid = Colormap::Viridis.rgb(128);
        assert!(rgba.chunks_exact(4).all(|p| p[..3] == mid && p[3] == 255));
        // Bools: false 0, true 1.
        let b = DType::parse("|b1").unwrap();
        let (_, _, rgba) = decode(&render_png(&[0, 1], b, &[1, 2], &opts).unwrap().png);
        assert_eq!(rgba, [0, 0, 0, 255, 2, 2, 2, 255], "t 0.01 -> entry 2");
    }

    #[test]
    fn a_range_wider_than_a_double_keeps_each_value_in_its_place() {
        // vmax - vmin overflows f64: before, every t was finite / inf = 0 and every pixel took
        // the map's first entry. t by hand: for -1..2 between -1.7e308 and 1.7e308, 0.5 (entry
        // floor(0.5 * 256) = 128); for the data's own range -MAX..MAX, 0, 0.5, 0.5, 1.
        let gray = |data: &[f64], vmin, vmax| -> Vec<u8> {
            let opts = RenderOptions {
                cmap: Colormap::Gray,
                vmin,
                vmax,
                ..Default::default()
            };
            let p = render_png(&f8(data), DType::parse("<f8").unwrap(), &[2, 2], &opts).unwrap();
            decode(&p.png).2.chunks_exact(4).map(|p| p[0]).collect()
        };
        let wide = gray(&[-1.0, 0.0, 1.0, 2.0], Some(-1.7e308), Some(1.7e308));
        assert_eq!(wide, [128, 128, 128, 128]);
        let own = gray(&[-f64::MAX, 0.0, 1.0, f64::MAX], None, None);
        assert_eq!(own, [0, 128, 128, 255]);
        // pixel() follows the same rule.
        assert_eq!(
            pixel(f64::MAX, -f64::MAX, f64::MAX, Colormap::Gray),
            [255; 4]
        );
        assert_eq!(pixel(0.0, -f64::MAX, f64::MAX, Colormap::Gray)[0], 128);
        // A span that does not overflow is computed as before: 7 between 0 and 100.
        assert_eq!(pixel(7.0, 0.0, 100.0, Colormap::Gray)[0], 17);
    }

    #[test]
    fn refusals_are_typed() {
        let dtype = DType::parse("<f4").unwrap();
        let o = RenderOptions::default();
        let e = render_png(&[0; 16], dtype, &[4], &o).unwrap_err();
        assert!(matches!(e, RenderError::Rank { rank: 1, .. }), "{e}");
        assert_eq!(e.code(), "INVALID_ARGUMENT");
        let e = render_png(&[0; 32], dtype, &[2, 2, 2], &o).unwrap_err();
        assert!(matches!(e, RenderError::Rank { rank: 3, .. }), "{e}");
        let e = render_png(&[0; 12], dtype, &[1, 3, 1], &o).unwrap_err();
        assert!(matches!(e, RenderError::Rank { rank: 1, .. }), "{e}");
        let e = render_png(&[0; 4], dtype, &[1, 1, 1], &o).unwrap_err();
        assert!(matches!(e, RenderError::Rank { rank: 0, .. }), "{e}");
        let p = render_png(&[0; 24], dtype, &[1, 2, 1, 3], &o).unwrap();
        assert_eq!((p.rows, p.cols), (2, 3), "size-1 dimensions dropped");
        let e = render_png(&[], dtype, &[0, 3], &o).unwrap_err();
        assert!(matches!(e, RenderError::Empty { .. }), "{e}");
        let e = render_png(&[0; 12], dtype, &[1, 2], &o).unwrap_err();
        assert!(matches!(e, RenderError::Length { expected: 8, .. }), "{e}");
        let c = DType::parse("<c8").unwrap();
        assert!(matches!(
            render_png(&[0; 8], c, &[1, 1], &o).unwrap_err(),
            RenderError::DType { .. }
        ));
        let small = RenderOptions { max_pixels: 5, ..o };
        let e = render_png(&[0; 24], dtype, &[2, 3], &small).unwrap_err();
        assert_eq!(e.code(), "INVALID_SELECTION");
        assert!(e.to_string().contains("limit of 5 pixels"), "{e}");
        assert!(render_png(&[0; 20], dtype, &[1, 5], &small).is_ok());
        // A side past PNG's 2^31 - 1 is named as such, whatever maxPixels allows (the message
        // said the pixel limit was exceeded).
        let e = check_size(&[1 << 31, 1], u64::MAX).unwrap_err();
        assert!(
            matches!(
                e,
                RenderError::TooLong {
                    rows: 2147483648,
                    cols: 1
                }
            ),
            "{e}"
        );
        assert_eq!(e.code(), "INVALID_SELECTION");
        assert!(e.to_string().contains("at most 2147483647 rows"), "{e}");
        assert_eq!(
            check_size(&[(1 << 31) - 1, 1], u64::MAX),
            Ok(((1 << 31) - 1, 1))
        );
        let bad = RenderOptions {
            vmin: Some(2.0),
            vmax: Some(1.0),
            ..o
        };
        assert!(matches!(
            render_png(&[0; 4], dtype, &[1, 1], &bad).unwrap_err(),
            RenderError::Range { .. }
        ));
        let nan = RenderOptions {
            vmax: Some(f64::NAN),
            ..o
        };
        assert!(render_png(&[0; 4], dtype, &[1, 1], &nan).is_err());
        let e = colormap_named("jet").unwrap_err();
        assert!(e.to_string().contains("viridis, gray, magma"), "{e}");
    }
}
