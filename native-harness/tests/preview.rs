//! `chunkwise preview` over the real range server: every pixel of the PNG it writes checked
//! against the colour map applied here to the `.npy` the fixture generator wrote
//! (tests/fixtures/gen_preview.py), with the viridis table parsed from the preview page's
//! own `www/colormaps.js`, so the page and the PNG agree; and its refusals.

use chunkwise::npy::read_npy;
use std::path::{Path, PathBuf};

mod common;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// The viridis table of `www/colormaps.js` (its `VIRIDIS_HEX` strings), 256 RGB entries.
fn page_viridis() -> Vec<[u8; 3]> {
    let js =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../www/colormaps.js"))
            .expect("www/colormaps.js");
    let start = js.find("const VIRIDIS_HEX = [").expect("VIRIDIS_HEX");
    let end = start + js[start..].find("].join").expect("end of VIRIDIS_HEX");
    let hex: String = js[start..end].split('"').skip(1).step_by(2).collect();
    assert_eq!(hex.len(), 1536, "256 RGB entries");
    (0..256)
        .map(|i| {
            let c =
                |k: usize| u8::from_str_radix(&hex[6 * i + 2 * k..6 * i + 2 * k + 2], 16).unwrap();
            [c(0), c(1), c(2)]
        })
        .collect()
}

/// matplotlib's gray in 8 bits: entry i is (i, i, i).
fn gray() -> Vec<[u8; 3]> {
    (0..=255u8).map(|i| [i, i, i]).collect()
}

/// The values of a `.npy` as f64 (little-endian float32, int16, bool).
fn npy_values(name: &str) -> (Vec<u64>, Vec<f64>) {
    let npy =
        read_npy(&std::fs::read(fixtures().join("preview").join(name)).expect(name)).expect(name);
    let v = match npy.descr.as_str() {
        "<f4" => npy
            .data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()) as f64)
            .collect(),
        "<i2" => npy
            .data
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes(b.try_into().unwrap()) as f64)
            .collect(),
        "|b1" | "|u1" => npy.data.iter().map(|&b| b as f64).collect(),
        d => panic!("{name}: dtype {d} not handled here"),
    };
    (npy.shape, v)
}

/// The expected RGBA image of `values` (rows x cols, C order) through `table`: t = (v - vmin)
/// / (vmax - vmin) (0.5 when vmax <= vmin), entry min(255, floor(t * 256)) clamped to
/// 0..=255, opaque; NaN and infinities transparent. vmin/vmax default to the finite extremes.
fn expected(
    values: &[f64],
    table: &[[u8; 3]],
    vmin: Option<f64>,
    vmax: Option<f64>,
) -> (Vec<u8>, f64, f64) {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let lo = vmin.unwrap_or_else(|| finite.iter().copied().fold(f64::INFINITY, f64::min));
    let hi = vmax.unwrap_or_else(|| finite.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let mut out = Vec::new();
    for &v in values {
        if !v.is_finite() {
            out.extend_from_slice(&[0, 0, 0, 0]);
            continue;
        }
        let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
        let i = if t <= 0.0 {
            0
        } else if t >= 1.0 {
            255
        } else {
            ((t * 256.0) as usize).min(255)
        };
        out.extend_from_slice(&table[i]);
        out.push(255);
    }
    (out, lo, hi)
}

/// The pixels of a PNG file: (width, height, RGBA).
fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).expect("a frame");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Runs `chunkwise preview ARGS` (off the async runtime that serves): (status ok, stdout
/// JSON or stderr JSON).
async fn preview(args: Vec<String>) -> (bool, serde_json::Value) {
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
            .arg("preview")
            .args(&args)
            .output()
            .expect("chunkwise runs")
    })
    .await
    .unwrap();
    let text = if out.status.success() {
        &out.stdout
    } else {
        &out.stderr
    };
    let line = String::from_utf8_lossy(text);
    let json = serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{e}: {line}"));
    (out.status.success(), json)
}

/// Elements of `values` (C order, `shape`) at `rows` x `cols` of a 2-D plane picked by `at`.
fn pick(
    values: &[f64],
    shape: &[u64],
    at: impl Fn(u64, u64) -> Vec<u64>,
    rows: u64,
    cols: u64,
) -> Vec<f64> {
    let mut out = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            let idx = at(r, c);
            let lin = idx
                .iter()
                .zip(shape)
                .fold(0u64, |acc, (&i, &n)| acc * n + i);
            out.push(values[lin as usize]);
        }
    }
    out
}

struct Case {
    what: &'static str,
    file: &'static str,
    path: Option<&'static str>,
    select: &'static str,
    cmap: &'static str,
    table: Vec<[u8; 3]>,
    vmin: Option<f64>,
    vmax: Option<f64>,
    /// (rows, cols) of the image.
    size: (u64, u64),
    /// The expected values, rows x cols in C order.
    values: Vec<f64>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_pixel_is_the_colour_map_of_the_npy_values() {
    let server = common::serve_dir(fixtures()).await;
    let out_dir = common::process_dir("chunkwise-preview-");
    let (fshape, field) = npy_values("field_f4.npy");
    assert_eq!(fshape, [2, 37, 53]);
    assert!(field.iter().any(|v| v.is_nan()) && field.iter().any(|v| v.is_infinite()));
    let (tshape, temp) = npy_values("grid_temp.npy");
    let (_, mask) = npy_values("grid_mask.npy");
    let magma: Vec<[u8; 3]> = (0..=255u8)
        .map(|i| chunkwise::render::Colormap::Magma.rgb(i))
        .collect();
    let cases = [
        Case {
            what: "b2nd plane 0, viridis, finite range, NaN and inf transparent",
            file: "preview/field_f4.b2nd",
            path: None,
            select: "0, :, :",
            cmap: "viridis",
            table: page_viridis(),
            vmin: None,
            vmax: None,
            size: (37, 53),
            values: pick(&field, &fshape, |r, c| vec![0, r, c], 37, 53),
        },
        Case {
            what: "b2nd stepped window with a size-1 dimension, gray, vmin/vmax clamping",
            file: "preview/field_f4.b2nd",
            path: None,
            select: "1:2, 5:30, ::2",
            cmap: "gray",
            table: gray(),
            vmin: Some(-2.5),
            vmax: Some(7.25),
            size: (25, 27),
            values: pick(&field, &fshape, |r, c| vec![1, 5 + r, 2 * c], 25, 27),
        },
        Case {
            what: "HDF5 int16 through gzip + shuffle, magma",
            file: "preview/grid_i2.h5",
            path: Some("/grid/temp"),
            select: "",
            cmap: "magma",
            table: magma,
            vmin: None,
            vmax: None,
            size: (40, 30),
            values: temp.clone(),
        },
        Case {
            what: "HDF5 bool with an unallocated chunk, reversed rows",
            file: "preview/grid_i2.h5",
            path: Some("/grid/mask"),
            select: "::-1, :",
            cmap: "gray",
            table: gray(),
            vmin: None,
            vmax: None,
            size: (40, 30),
            values: pick(&mask, &tshape, |r, c| vec![39 - r, c], 40, 30),
        },
    ];
    for (k, case) in cases.iter().enumerate() {
        let png_path = out_dir.join(format!("case{k}.png"));
        let mut args = vec![
            server.url(case.file),
            "--select".into(),
            case.select.into(),
            "--out".into(),
            png_path.display().to_string(),
            "--cmap".into(),
            case.cmap.into(),
        ];
        if let Some(p) = case.path {
            args.extend(["--path".into(), p.into()]);
        }
        if let Some(v) = case.vmin {
            args.extend(["--vmin".into(), v.to_string()]);
        }
        if let Some(v) = case.vmax {
            args.extend(["--vmax".into(), v.to_string()]);
        }
        let (ok, line) = preview(args).await;
        assert!(ok, "{}: {line}", case.what);
        let (want, lo, hi) = expected(&case.values, &case.table, case.vmin, case.vmax);
        assert_eq!(
            line["shape"],
            serde_json::json!([case.size.0, case.size.1]),
            "{}",
            case.what
        );
        assert_eq!(line["vmin"].as_f64(), Some(lo), "{}", case.what);
        assert_eq!(line["vmax"].as_f64(), Some(hi), "{}", case.what);
        assert!(
            line["requests"].as_u64().unwrap() >= 1,
            "{}: read over HTTP",
            case.what
        );
        let bytes = std::fs::read(&png_path).expect("the PNG written");
        assert_eq!(line["png_bytes"].as_u64(), Some(bytes.len() as u64));
        let (w, h, rgba) = decode_png(&bytes);
        assert_eq!(
            (h as u64, w as u64),
            case.size,
            "{}: rows high, columns wide",
            case.what
        );
        for (i, (got, want)) in rgba.chunks_exact(4).zip(want.chunks_exact(4)).enumerate() {
            assert_eq!(
                got,
                want,
                "{}: pixel {i} (row {}, col {})",
                case.what,
                i / w as usize,
                i % w as usize
            );
        }
        let transparent = rgba.chunks_exact(4).filter(|p| p[3] == 0).count();
        let non_finite = case.values.iter().filter(|v| !v.is_finite()).count();
        assert_eq!(transparent, non_finite, "{}", case.what);
    }
    // The first case has its NaN and infinities as transparent pixels.
    assert!(field[..37 * 53].iter().filter(|v| !v.is_finite()).count() == 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_name_their_cause() {
    let server = common::serve_dir(fixtures()).await;
    let out = common::process_dir("chunkwise-refusals-")
        .join("x.png")
        .display()
        .to_string();
    let url = server.url("preview/field_f4.b2nd");
    let run = |extra: &[&str]| {
        let mut a = vec![url.clone(), "--out".to_string(), out.clone()];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let (ok, e) = preview(run(&["--select", "0, 0, :"])).await;
    assert!(!ok);
    assert_eq!(e["error"]["code"], "INVALID_ARGUMENT", "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("2-D"),
        "{e}"
    );
    let (ok, e) = preview(run(&["--select", ":, :, :"])).await;
    assert!(!ok);
    assert_eq!(e["error"]["code"], "INVALID_ARGUMENT", "3-D: {e}");
    let (ok, e) = preview(run(&["--select", "0", "--max-pixels", "1000"])).await;
    assert!(!ok);
    assert_eq!(e["error"]["code"], "INVALID_SELECTION", "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("37 x 53 = 1961 pixels exceeds the limit of 1000 pixels"),
        "{e}"
    );
    let (ok, e) = preview(run(&["--select", "0", "--cmap", "jet"])).await;
    assert!(!ok);
    assert_eq!(e["error"]["code"], "INVALID_ARGUMENT", "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("jet"),
        "{e}"
    );
    let (ok, e) = preview(run(&["--select", "0", "--vmin", "3", "--vmax", "-3"])).await;
    assert!(!ok);
    assert_eq!(e["error"]["code"], "INVALID_ARGUMENT", "{e}");
    // Within the limit the same selection renders (the limit is what refused it).
    let (ok, line) = preview(run(&["--select", "0", "--max-pixels", "1961"])).await;
    assert!(ok, "{line}");
}
