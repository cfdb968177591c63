//! `.b2z` containers: python-blosc2 TreeStore, DictStore and CTable saved as a ZIP of
//! stored members (facts: "B2Z containers"; spec: remote cache design, ".b2z archives").
//!
//! - [`zip`]: the ZIP directory, parsed from bounded ranges (pure);
//! - [`archive`]: discovery of the archive by a suffix read, the small-archive copy, members
//!   read in place through windows;
//! - [`embed`]: the embedded store `embed.b2e` and its decoded byte stream;
//! - [`list`]: which names are arrays, groups and attributes, with every leaf's frame
//!   header and offsets read at discovery;
//! - [`table`]: which arrays of a CTable's group are its columns and mask.
//!
//! A [`B2zStore`] is what a [`crate::RemoteStore`] of a `.b2z` reads its leaves from: its
//! listing ([`B2zListingSeed`], the store manifest the discovery cache keeps) holds the
//! directory, the embedded store's frame and each leaf's bootstrap seed, so a warm reopen and
//! every leaf open make no request.

pub mod archive;
pub mod embed;
pub mod list;
pub mod table;
pub mod zip;

use crate::formats::b2nd::{B2ndArray, B2ndSeed};
use crate::formats::{FormatError, FormatSeed, Node};
use crate::io::{RangeSource, SourceInfo};
use archive::Archive;
use bytes::Bytes;
use embed::{EmbedStore, EmbedStream, StoreKind};
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Where a leaf's frame lies.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LeafPlace {
    /// An external `.b2nd` member: its name and its data range in the archive.
    Member { name: String, data: Range<u64> },
    /// An embedded frame: its range in the embedded store's decoded byte stream.
    Embedded { range: Range<u64> },
}

/// One array of the store and what rebuilds its reader.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Leaf {
    /// Node path (`/g/data`).
    pub path: String,
    /// Where its frame lies.
    pub place: LeafPlace,
    /// Its frame header and offsets chunk plus trailer, when discovery read them (`None`
    /// for offsets larger than [`list::MAX_LISTED_INDEX_BYTES`], read at open).
    pub frame: Option<B2ndSeed>,
}

/// The store manifest a `.b2z` store's discovery record keeps: the ZIP directory, the
/// embedded store's frame, every leaf and the listing.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct B2zListingSeed {
    /// The central directory.
    pub directory: zip::Directory,
    /// TreeStore or DictStore.
    pub kind: StoreKind,
    /// `embed.b2e`'s data range in the archive.
    pub embed_data: Range<u64>,
    /// `embed.b2e`'s frame header and index (lower-case hex).
    pub embed: B2ndSeed,
    /// The arrays.
    pub leaves: Vec<Leaf>,
    /// Groups and arrays, sorted by path.
    pub nodes: Vec<Node>,
}

impl FormatSeed for B2zListingSeed {
    const FORMAT: &'static str = "b2z-listing";
    /// 2: NDim arrays named `_meta` or `__vlmeta__` are listed (a version 1 listing took
    /// them for attributes).
    const VERSION: u32 = 2;
}

/// A `.b2z` archive with its listing: what a store's leaves open from.
pub struct B2zStore {
    archive: Archive,
    embed: Arc<EmbedStore>,
    embed_data: Range<u64>,
    leaves: Vec<Leaf>,
    nodes: Vec<Node>,
    /// Members read whole at discovery, not yet handed to a leaf (path → bytes).
    prefetched: Mutex<Vec<(String, Bytes)>>,
}

impl std::fmt::Debug for B2zStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("B2zStore")
            .field("archive", &self.archive)
            .field("leaves", &self.leaves.len())
            .finish()
    }
}

/// What a leaf opens from: its source (a window of the archive or of the embedded stream),
/// its reader, and the member's bytes when discovery read it whole.
pub struct LeafOpen {
    /// The leaf's frame as a source of its own.
    pub source: Arc<dyn RangeSource>,
    /// Its reader.
    pub array: B2ndArray,
    /// The whole member read at discovery (chunks for the payload cache), once.
    pub prefetched: Option<Bytes>,
    /// Whether the reader was rebuilt from the listing (no request).
    pub from_seed: bool,
}

impl B2zStore {
    /// Discovers the archive behind `transport` and lists it (cold). Returns the store and,
    /// for an archive up to `small_source_bytes`, its bytes (the small-source copy).
    ///
    /// # Errors
    /// As [`Archive::discover`] and [`list::list`].
    pub async fn discover(
        transport: Arc<dyn RangeSource>,
        small_source_bytes: u64,
        concurrency: usize,
    ) -> crate::Result<(B2zStore, Option<Bytes>)> {
        let (archive, whole) = Archive::discover(transport, small_source_bytes).await?;
        let listed = list::list(&archive, concurrency).await?;
        Ok((
            B2zStore {
                archive,
                embed: listed.embed,
                embed_data: listed.embed_data,
                leaves: listed.leaves,
                nodes: listed.nodes,
                prefetched: Mutex::new(listed.prefetched),
            },
            whole,
        ))
    }

    /// The store from its manifest (warm): no request. `whole` is the small-source copy when
    /// the coordinator holds it; without it members are read by ranges through `transport`,
    /// every answer checked against `info`.
    ///
    /// # Errors
    /// [`FormatError::Invalid`] when the manifest's embedded store does not parse (callers
    /// take it as a miss).
    pub fn from_seed(
        transport: Arc<dyn RangeSource>,
        info: SourceInfo,
        seed: B2zListingSeed,
        whole: Option<Bytes>,
    ) -> Result<B2zStore, FormatError> {
        if seed.embed_data.start > seed.embed_data.end || seed.embed_data.end > info.len {
            return Err(archive::invalid(
                &info.location,
                "embed.b2e outside the archive",
            ));
        }
        let embed = EmbedStore::from_parts(
            &format!("{} member {}", info.location, list::EMBED_MEMBER),
            seed.embed.header.clone(),
            seed.embed.index.clone(),
            seed.embed_data.end.saturating_sub(seed.embed_data.start),
        )?;
        let archive = Archive::from_parts(transport, info, seed.directory, whole);
        Ok(B2zStore {
            archive,
            embed: Arc::new(embed),
            embed_data: seed.embed_data,
            leaves: seed.leaves,
            nodes: seed.nodes,
            prefetched: Mutex::new(Vec::new()),
        })
    }

    /// The manifest of this store.
    pub fn seed(&self) -> B2zListingSeed {
        let (header, index) = self.embed.parts();
        B2zListingSeed {
            directory: self.archive.directory().clone(),
            kind: self.embed.kind(),
            embed_data: self.embed_data.clone(),
            embed: B2ndSeed { header, index },
            leaves: self.leaves.clone(),
            nodes: self.nodes.clone(),
        }
    }

    /// Groups and arrays, sorted by path.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The arrays and where they lie.
    pub fn leaves(&self) -> &[Leaf] {
        &self.leaves
    }

    /// Size and validators of the archive.
    pub fn info(&self) -> &SourceInfo {
        self.archive.info()
    }

    /// The archive.
    pub fn archive(&self) -> &Archive {
        &self.archive
    }

    /// The leaf at `path` as a source and a reader: rebuilt from the listing's seed (no
    /// request), or, for a leaf whose offsets were not read at listing, from `frame` (a
    /// seed the caller holds from an earlier open) or by reading them (one request).
    ///
    /// # Errors
    /// [`FormatError::NoSuchNode`] for a path that is no array (naming the arrays of a
    /// group, or the node's error); the reader's errors.
    pub async fn open_leaf(&self, path: &str, frame: Option<B2ndSeed>) -> crate::Result<LeafOpen> {
        let location = &self.archive.info().location;
        let Some(leaf) = self.leaves.iter().find(|l| l.path == path) else {
            return Err(self.not_a_leaf(path));
        };
        // A manifest from a reference document is checked, not trusted: its ranges must lie
        // inside the archive (or the embedded stream).
        let bad = |what: &str| -> crate::Error {
            archive::invalid(location, format!("{path}: {what} outside the archive")).into()
        };
        let (source, len): (Arc<dyn RangeSource>, u64) = match &leaf.place {
            LeafPlace::Member { name, data } => {
                if data.start > data.end || data.end > self.archive.info().len {
                    return Err(bad("member data"));
                }
                (
                    self.archive.member_source(data.clone(), name),
                    data.end - data.start,
                )
            }
            LeafPlace::Embedded { range } => {
                if range.start > range.end || range.end > self.embed.stream_len() {
                    return Err(bad("embedded frame"));
                }
                let member = self
                    .archive
                    .member_source(self.embed_data.clone(), list::EMBED_MEMBER);
                let stream: Arc<dyn RangeSource> = Arc::new(EmbedStream::new(
                    self.embed.clone(),
                    member,
                    format!("{location} member {}", list::EMBED_MEMBER),
                ));
                (
                    Arc::new(crate::io::Window::new(
                        stream,
                        range.clone(),
                        format!("{location} embedded {path}"),
                    )),
                    range.end - range.start,
                )
            }
        };
        let prefetched = {
            let mut held = self.prefetched.lock().unwrap_or_else(|p| p.into_inner());
            held.iter()
                .position(|(p, _)| p == path)
                .map(|i| held.swap_remove(i).1)
        };
        let seed = leaf.frame.clone().or(frame);
        if let Some(seed) = seed {
            let array = seed.rebuild(source.location(), len)?;
            return Ok(LeafOpen {
                source,
                array,
                prefetched,
                from_seed: true,
            });
        }
        let head = source
            .read(crate::io::ByteRange::bounded(
                0..archive::MEMBER_PREFIX_BYTES.min(len),
            ))
            .await?
            .bytes;
        let array = B2ndArray::open(&*source, head, len).await?;
        Ok(LeafOpen {
            source,
            array,
            prefetched,
            from_seed: false,
        })
    }

    /// The error of opening `path` as an array when it is none.
    fn not_a_leaf(&self, path: &str) -> crate::Error {
        let location = self.archive.info().location.clone();
        let node = self.nodes.iter().find(|n| n.path == path);
        let detail = match node {
            Some(n) if n.error.is_some() => {
                return FormatError::Unsupported {
                    location,
                    format: "b2z",
                    detail: format!("{path}: {}", n.error.clone().unwrap_or_default()),
                }
                .into()
            }
            Some(_) => {
                let prefix = if path == "/" {
                    "/".to_string()
                } else {
                    format!("{path}/")
                };
                let arrays: Vec<String> = self
                    .leaves
                    .iter()
                    .filter(|l| l.path.starts_with(&prefix))
                    .map(|l| l.path.clone())
                    .collect();
                format!(
                    "{path} is a group, not an array; {}",
                    crate::formats::its_arrays(&arrays)
                )
            }
            None => format!("no array or group at {path}"),
        };
        FormatError::NoSuchNode { location, detail }.into()
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::io::memory::MemorySource;

    fn tree() -> Arc<dyn RangeSource> {
        let path = format!("{}/tests/fixtures/b2z/tree.b2z", env!("CARGO_MANIFEST_DIR"));
        Arc::new(MemorySource::new(
            "mem://tree.b2z",
            std::fs::read(path).unwrap(),
        ))
    }

    #[tokio::test]
    async fn a_manifest_with_ranges_outside_the_archive_is_refused_not_a_panic() {
        // Listed by ranges (no small-archive copy), as a reference document reopens.
        let (store, whole) = B2zStore::discover(tree(), 0, 4).await.unwrap();
        assert!(whole.is_none());
        let mut seed = store.seed();
        assert!(seed
            .leaves
            .iter()
            .any(|l| matches!(l.place, LeafPlace::Embedded { .. })));
        // A reversed range, as a tampered document could hold.
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 10..5;
        for l in &mut seed.leaves {
            l.place = match &l.place {
                LeafPlace::Member { name, .. } => LeafPlace::Member {
                    name: name.clone(),
                    data: reversed.clone(),
                },
                LeafPlace::Embedded { .. } => LeafPlace::Embedded { range: 0..u64::MAX },
            };
        }
        let crafted =
            B2zStore::from_seed(tree(), store.info().clone(), seed.clone(), None).unwrap();
        for l in crafted.leaves() {
            let e = crafted
                .open_leaf(&l.path, None)
                .await
                .err()
                .expect("refused");
            assert_eq!(e.code(), "INVALID_DATA", "{}: {e}", l.path);
        }
        seed.embed_data = 0..u64::MAX;
        assert!(B2zStore::from_seed(tree(), store.info().clone(), seed, None).is_err());
    }
}
