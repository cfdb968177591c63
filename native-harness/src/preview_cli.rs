//! `chunkwise preview`: a 2-D selection of an array rendered as a PNG file through a colour
//! map ([`chunkwise::render`]), the picture the JS `renderPng` and the edge service's
//! `/v1/preview.png` give for the same values.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::cache::CacheCoordinator;
use chunkwise::render::RenderOptions;
use chunkwise::selection::Selection;

/// What to preview, as the command line gives it.
pub struct PreviewRequest<'a> {
    /// SOURCE: a URL or a local path.
    pub source: &'a str,
    /// Request headers (`--header`).
    pub headers: Vec<(String, String)>,
    /// Open options (`--path`, `--cache`, `--cache-key`).
    pub options: OpenOptions,
    /// The selection text (`--select`; empty: the whole array).
    pub select: &'a str,
    /// Colour map, range and pixel limit (`--cmap`, `--vmin`, `--vmax`, `--max-pixels`).
    pub render: RenderOptions,
}

/// What a preview did: the PNG file and the one JSON line the command prints.
pub struct PreviewOutcome {
    /// The PNG file.
    pub png: Vec<u8>,
    /// `{"shape":[rows,cols],"dtype","cmap","vmin","vmax","requests","bytes","png_bytes"}`
    /// (`vmin`/`vmax` null when no value is finite and none was given).
    pub line: serde_json::Value,
}

/// Opens `req.source`, checks that the selection gives a 2-D image within the pixel limit
/// (before reading: a preview too large costs no chunk request), reads it and renders it.
/// A source rewritten since its cached records were made (`SOURCE_CHANGED`) is reopened
/// once, as `chunkwise read` does.
///
/// # Errors
/// As `chunkwise read` (open, selection, I/O, decode); [`chunkwise::render::RenderError`]
/// for a shape not 2-D, too many pixels (`INVALID_SELECTION` naming the limit), a dtype
/// without a single real value per element, a bad value range.
pub async fn preview(
    req: PreviewRequest<'_>,
    coordinator: CacheCoordinator,
) -> Result<PreviewOutcome, chunkwise::Error> {
    let sel = Selection::parse(req.select).map_err(chunkwise::Error::Selection)?;
    let (mut requests, mut bytes) = (0, 0);
    let mut restarted = false;
    let data = loop {
        let arr = crate::source::open_array_cached(
            req.source,
            req.headers.clone(),
            req.options.clone(),
            coordinator.clone(),
        )
        .await?;
        let single = !matches!(arr.info().format, "hdf5" | "zarr2" | "zarr3" | "b2z");
        if let (true, Some(p)) = (single, req.options.path.as_deref()) {
            if !p.is_empty() && p != "/" {
                return Err(chunkwise::Error::InvalidArgument(format!(
                    "--path {p:?} given, but the source is a single array"
                )));
            }
        }
        let dims = sel
            .resolve(arr.shape())
            .map_err(chunkwise::Error::Selection)?;
        let shape: Vec<u64> = dims.iter().filter(|d| d.keep).map(|d| d.count).collect();
        chunkwise::render::check_size(&shape, req.render.max_pixels)?;
        let read = arr.read(&sel, &ReadOptions::default()).await;
        let t = arr.traffic();
        (requests, bytes) = (requests + t.requests, bytes + t.bytes);
        match read {
            Err(chunkwise::Error::Io(chunkwise::io::IoError::SourceChanged { .. }))
                if !restarted =>
            {
                restarted = true;
            }
            other => break other?,
        }
    };
    if data.element.is_some() {
        return Err(chunkwise::render::RenderError::DType {
            dtype: data.element.as_ref().map(|e| e.descr()).unwrap_or_default(),
        }
        .into());
    }
    let p = chunkwise::render::render_png(&data.data, data.dtype, &data.shape, &req.render)?;
    let finite = |v: f64| {
        if v.is_finite() {
            serde_json::Value::from(v)
        } else {
            serde_json::Value::Null
        }
    };
    let line = serde_json::json!({
        "shape": [p.rows, p.cols],
        "dtype": data.dtype.to_string(),
        "cmap": req.render.cmap.name(),
        "vmin": finite(p.vmin),
        "vmax": finite(p.vmax),
        "requests": requests,
        "bytes": bytes,
        "png_bytes": p.png.len(),
    });
    Ok(PreviewOutcome { png: p.png, line })
}
