//! `chunkwise read SOURCE --columns a,b [--path /group/table] [--select "0:100"]`: rows of a
//! table ([`chunkwise::table::RemoteTable`]) as a structured `.npy` and/or numpy's print of a
//! structured array.

use chunkwise::array::ReadOptions;
use chunkwise::cache::CacheCoordinator;
use chunkwise::selection::{Index, Selection};
use chunkwise::table::{RemoteTable, TableRows};
use chunkwise::Error;

/// What `read --columns` was given.
pub struct TableRead<'a> {
    /// SOURCE.
    pub source: &'a str,
    /// `--path`: the table inside the container.
    pub path: Option<&'a str>,
    /// `--columns`, comma-separated names.
    pub columns: &'a str,
    /// `--select`: one slice `start:stop` of live rows (Python slicing), or empty for all.
    pub select: &'a str,
    /// `--header` values.
    pub headers: Vec<(String, String)>,
    /// `--cache-key`.
    pub cache_key: Option<&'a str>,
}

/// The live-row range of `--select` over a table of `nrows` live rows: empty text is every
/// row, one `start:stop` slice is clamped as Python clamps it (negative values count from
/// the end).
///
/// # Errors
/// `INVALID_ARGUMENT` for anything else (an integer, a step, several items), and for text
/// that does not parse.
pub fn live_range(select: &str, nrows: u64) -> Result<(u64, u64), Error> {
    let refuse = || {
        Error::InvalidArgument(format!(
            "--select {select:?}: a table read takes one slice of live rows, start:stop"
        ))
    };
    let sel = Selection::parse(select).map_err(|_| refuse())?;
    match sel.items.as_slice() {
        [] => Ok((0, nrows)),
        [Index::Slice {
            step: None | Some(1),
            ..
        }] => {
            let d = sel.resolve(&[nrows]).map_err(|_| refuse())?[0];
            Ok((d.start, d.start + d.count))
        }
        _ => Err(refuse()),
    }
}

/// Opens the table and reads the rows `read` names; also the store's requests and bytes.
///
/// # Errors
/// `INVALID_ARGUMENT` for an HDF5 file without `--path`, a bad `--select` or an unknown
/// column; those of [`chunkwise::store::RemoteStore::table`] and
/// [`RemoteTable::read_rows`].
pub async fn read_table(
    read: TableRead<'_>,
    coordinator: CacheCoordinator,
    options: &ReadOptions<'_>,
) -> Result<(TableRows, u64, u64), Error> {
    let store =
        crate::source::open_store_cached(read.source, read.headers, coordinator, read.cache_key)
            .await?;
    let path = match (read.path, store.kind()) {
        (Some(p), _) => p.to_string(),
        (None, "hdf5") => {
            return Err(Error::InvalidArgument(
                "--columns on an HDF5 file needs --path, the table's dataset or group".into(),
            ))
        }
        (None, _) => "/".to_string(),
    };
    let table: RemoteTable = store.table(&path).await?;
    let names: Vec<String> = read
        .columns
        .split(',')
        .map(|c| c.trim().to_string())
        .collect();
    let nrows = table.nrows().await?;
    let (start, stop) = live_range(read.select, nrows)?;
    let rows = table.read_rows(start, stop, Some(&names), options).await?;
    let t = store.traffic();
    Ok((rows, t.requests, t.bytes))
}

#[cfg(test)]
mod tests {
    use super::live_range;

    #[test]
    fn select_is_one_slice_of_live_rows() {
        assert_eq!(live_range("", 50).unwrap(), (0, 50));
        assert_eq!(live_range("0:100", 50).unwrap(), (0, 50));
        assert_eq!(live_range("-10:", 50).unwrap(), (40, 50));
        let (start, stop) = live_range("30:10", 50).unwrap();
        assert_eq!(start, stop, "an empty slice");
        for bad in ["3", "::2", "0:10, 1", "a:b", "..."] {
            assert_eq!(live_range(bad, 50).unwrap_err().code(), "INVALID_ARGUMENT");
        }
    }
}
