//! Opening a SOURCE argument natively: an `http(s)://` URL through [`HttpSource`] with
//! retries, anything else as a local file; both counted into one [`Traffic`].

use chunkwise::array::{OpenOptions, RemoteArray};
use chunkwise::io::file::FileSource;
use chunkwise::io::http::{HttpOptions, HttpSource};
use chunkwise::io::retry::{RetryConfig, Retrying};
use chunkwise::io::{Counted, RangeSource, Traffic};
use std::sync::Arc;

/// Builds the transport for `source` (URL or path) counting into `traffic`. Retries wrap the
/// counter, so every attempt counts as a request.
pub fn transport(
    source: &str,
    headers: Vec<(String, String)>,
    traffic: &Traffic,
) -> Result<Arc<dyn RangeSource>, chunkwise::Error> {
    if source.starts_with("http://") || source.starts_with("https://") {
        let http = HttpSource::with_options(
            source,
            HttpOptions {
                headers,
                ..Default::default()
            },
        )?;
        let counted = Counted::new(http, traffic.clone());
        Ok(Arc::new(Retrying::new(counted, RetryConfig::default())))
    } else {
        let file = FileSource::open(source)?;
        Ok(Arc::new(Counted::new(file, traffic.clone())))
    }
}

/// Opens an array at `source`.
pub async fn open_array(
    source: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
) -> Result<RemoteArray, chunkwise::Error> {
    let traffic = Traffic::new();
    let t = transport(source, headers, &traffic)?;
    RemoteArray::open_source(t, traffic, options).await
}
