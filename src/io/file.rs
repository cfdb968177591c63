//! Local files as a [`super::RangeSource`] (native only).
//!
//! Reads are positional (`pread`, via `FileExt::read_at`), so concurrent reads of one
//! [`FileSource`] share the open file without seeking. The file's size and modification time
//! are its identity: every read checks them again and fails with
//! [`IoError::SourceChanged`] if the file was rewritten since it was opened.

use super::{ByteRange, Fetched, IoError, RangeSource, SourceInfo};
use bytes::Bytes;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// The entity tag the project uses for a file of `len` bytes modified at `mtime`:
/// `"<len hex>-<mtime nanoseconds since the epoch, hex>"`. The native range server sends the
/// same value, so a file read locally and the same file read over HTTP have equal identity.
pub fn etag_for(len: u64, mtime: SystemTime) -> String {
    let nanos = mtime
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("\"{len:x}-{nanos:x}\"")
}

/// A local file read by byte ranges.
#[derive(Debug, Clone)]
pub struct FileSource {
    file: Arc<File>,
    path: PathBuf,
    info: SourceInfo,
    mtime: SystemTime,
}

impl FileSource {
    /// Opens `path` for reading and records its size and modification time.
    ///
    /// # Errors
    /// [`IoError::NotFound`] if the file does not exist; [`IoError::File`] for other failures
    /// (permissions, a directory).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, IoError> {
        let path = path.as_ref().to_path_buf();
        let location = path.display().to_string();
        let file = File::open(&path).map_err(|e| file_error(&location, e))?;
        let meta = file.metadata().map_err(|e| file_error(&location, e))?;
        if !meta.is_file() {
            return Err(IoError::File {
                location,
                message: "not a regular file".into(),
            });
        }
        let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        let info = SourceInfo {
            location,
            len: meta.len(),
            etag: Some(etag_for(meta.len(), mtime)),
            last_modified: Some(httpdate::fmt_http_date(mtime)),
        };
        Ok(Self {
            file: Arc::new(file),
            path,
            info,
            mtime,
        })
    }

    /// Size and validators recorded when the file was opened.
    pub fn info(&self) -> &SourceInfo {
        &self.info
    }

    /// The path opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Blocking read of `r` (already resolved against the length).
    fn read_blocking(&self, r: std::ops::Range<u64>) -> Result<Bytes, IoError> {
        let location = &self.info.location;
        let meta = self.file.metadata().map_err(|e| file_error(location, e))?;
        let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        if meta.len() != self.info.len || mtime != self.mtime {
            return Err(IoError::SourceChanged {
                location: location.clone(),
                detail: format!(
                    "size {} -> {}, etag {} -> {}",
                    self.info.len,
                    meta.len(),
                    self.info.etag.as_deref().unwrap_or(""),
                    etag_for(meta.len(), mtime)
                ),
            });
        }
        // `r` lies within the file's length, checked above, so this allocation is bounded by
        // the file size.
        let n = usize::try_from(r.end - r.start).map_err(|_| IoError::File {
            location: location.clone(),
            message: "range larger than this platform's address space".into(),
        })?;
        let mut buf = vec![0u8; n];
        let mut done = 0usize;
        while done < n {
            match read_at(&self.file, &mut buf[done..], r.start + done as u64) {
                Ok(0) => {
                    return Err(IoError::SourceChanged {
                        location: location.clone(),
                        detail: format!(
                            "file ended at {} while reading {r:?}",
                            r.start + done as u64
                        ),
                    })
                }
                Ok(k) => done += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(file_error(location, e)),
            }
        }
        Ok(Bytes::from(buf))
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

fn file_error(location: &str, e: std::io::Error) -> IoError {
    if e.kind() == std::io::ErrorKind::NotFound {
        IoError::NotFound {
            location: location.to_string(),
        }
    } else {
        IoError::File {
            location: location.to_string(),
            message: e.to_string(),
        }
    }
}

#[async_trait::async_trait]
impl RangeSource for FileSource {
    fn location(&self) -> &str {
        &self.info.location
    }

    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
        range.validate()?;
        let r = range.resolve(&self.info.location, self.info.len)?;
        let bytes = if r.is_empty() {
            Bytes::new()
        } else if tokio::runtime::Handle::try_current().is_ok() {
            // Under tokio, keep blocking disk reads off the async worker threads.
            let this = self.clone();
            let rr = r.clone();
            tokio::task::spawn_blocking(move || this.read_blocking(rr))
                .await
                .map_err(|e| IoError::File {
                    location: self.info.location.clone(),
                    message: e.to_string(),
                })??
        } else {
            self.read_blocking(r.clone())?
        };
        Ok(Fetched {
            range: r,
            bytes,
            info: self.info.clone(),
            whole: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[tokio::test]
    async fn passes_conformance() {
        let dir = tempfile::tempdir().unwrap();
        for n in [0usize, 1, 10, 5000] {
            let p = dir.path().join(format!("f{n}.bin"));
            std::fs::write(&p, pattern(n)).unwrap();
            let src = FileSource::open(&p).unwrap();
            assert_eq!(src.info().len, n as u64);
            crate::io::conformance::check_source(&src, &pattern(n)).await;
        }
    }

    #[test]
    fn reads_without_a_tokio_runtime() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.bin");
        std::fs::write(&p, pattern(100)).unwrap();
        let src = FileSource::open(&p).unwrap();
        let f = futures::executor::block_on(src.read(ByteRange::bounded(10..20))).unwrap();
        assert_eq!(&f.bytes[..], &pattern(100)[10..20]);
    }

    #[test]
    fn missing_file_is_not_found() {
        let e = FileSource::open("/definitely/not/here.bin").unwrap_err();
        assert!(matches!(e, IoError::NotFound { .. }), "{e:?}");
        let dir = tempfile::tempdir().unwrap();
        let e = FileSource::open(dir.path()).unwrap_err();
        assert!(matches!(e, IoError::File { .. }), "{e:?}");
    }

    #[tokio::test]
    async fn rewritten_file_is_source_changed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.bin");
        std::fs::write(&p, pattern(100)).unwrap();
        let src = FileSource::open(&p).unwrap();
        std::fs::write(&p, pattern(50)).unwrap();
        let e = src.read(ByteRange::bounded(0..10)).await.unwrap_err();
        assert!(matches!(e, IoError::SourceChanged { .. }), "{e:?}");
    }

    #[test]
    fn etag_has_size_and_time() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_nanos(0x1234);
        assert_eq!(etag_for(255, t), "\"ff-1234\"");
    }
}
