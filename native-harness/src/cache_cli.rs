//! `chunkwise cache ls|verify|clear --cache-dir DIR`: the DISK cache directory that
//! `--cache disk --cache-dir DIR` fills ([`chunkwise::cache::CacheCoordinator::disk`]), listed,
//! checked and emptied.
//!
//! Every command first checks that `DIR` is a chunkwise cache directory: it holds the
//! namespace directories `payload/`, `discovery/` and `sources/` (real directories, not
//! symbolic links), and it and they belong to this user and are not writable by others (the
//! rule DISK itself applies). Anything else is refused with `INVALID_ARGUMENT` and left
//! untouched, so `clear` never empties an arbitrary directory. Within a namespace only
//! chunkwise's own entry files are read or removed ([`chunkwise::cache::backend::fs`]).
//!
//! Output, one JSON object per line on stdout:
//! - `ls`: per entry `{"namespace","key","bytes","used"}`, least recently used first within
//!   each namespace (`used`: last access, ms since the Unix epoch). Keys hold public URLs
//!   (no query, no user info) and salted fingerprints only.
//! - `verify`: `{"checked":N,"bad":M}` after checking every marker and blob digest; bad
//!   entries are removed (they were misses already). The exit status is 0 whenever the check
//!   ran, bad entries or not: removing them is the repair, and `bad` reports it.
//! - `clear`: `{"removed":N}` entries; the namespace directories stay (empty) and the
//!   fingerprint salt is removed, so later entries get a new salt. `locks/` is kept: a lock
//!   file removed while another process holds it would no longer exclude anyone. Close
//!   other users of the directory first.

use chunkwise::cache::backend::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The `chunkwise cache` subcommands.
#[derive(clap::Subcommand)]
pub enum CacheCommand {
    /// One JSON line per entry: {"namespace","key","bytes","used"} (used: ms since the epoch).
    Ls {
        /// The cache directory (as given to --cache-dir with --cache disk).
        #[arg(long)]
        cache_dir: PathBuf,
    },
    /// Check every marker and blob digest, remove bad entries, print {"checked":N,"bad":M}
    /// (exit status 0 with bad entries removed).
    Verify {
        /// The cache directory.
        #[arg(long)]
        cache_dir: PathBuf,
    },
    /// Remove every entry and the fingerprint salt, print {"removed":N}; refuses a
    /// directory without the payload/, discovery/, sources/ layout.
    Clear {
        /// The cache directory.
        #[arg(long)]
        cache_dir: PathBuf,
    },
}

fn invalid(dir: &Path, what: impl std::fmt::Display) -> chunkwise::Error {
    chunkwise::Error::InvalidArgument(format!("cache directory {}: {what}", dir.display()))
}

/// The namespace directories of the chunkwise cache directory `dir`, checked as the module
/// documentation says.
///
/// # Errors
/// [`chunkwise::Error::InvalidArgument`] when `dir` is not such a directory.
pub fn namespaces(dir: &Path) -> Result<Vec<(&'static str, PathBuf)>, chunkwise::Error> {
    let mut out = Vec::new();
    for ns in fs::NAMESPACES {
        let path = dir.join(ns);
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_dir());
        if !is_dir {
            return Err(invalid(
                dir,
                format!(
                    "not a chunkwise cache directory (no {ns}/ directory; one has {})",
                    fs::NAMESPACES.map(|n| format!("{n}/")).join(", ")
                ),
            ));
        }
        out.push((ns, path));
    }
    // Existing directories: ownership and mode are checked, nothing is created.
    fs::private_dir(dir).map_err(|e| invalid(dir, e))?;
    for (_, path) in &out {
        fs::private_dir(path).map_err(|e| invalid(dir, e))?;
    }
    Ok(out)
}

/// Runs `cmd`, writing its JSON lines to `out`.
///
/// # Errors
/// [`chunkwise::Error::InvalidArgument`]: not a cache directory, a directory that cannot be
/// listed, a file that cannot be removed, or `out` failing.
pub fn run(cmd: &CacheCommand, out: &mut dyn Write) -> Result<(), chunkwise::Error> {
    let w = |out: &mut dyn Write, v: serde_json::Value| {
        writeln!(out, "{v}").map_err(|e| chunkwise::Error::InvalidArgument(e.to_string()))
    };
    match cmd {
        CacheCommand::Ls { cache_dir } => {
            for (ns, path) in namespaces(cache_dir)? {
                for e in fs::list_namespace(&path).map_err(|e| invalid(cache_dir, e))? {
                    w(
                        out,
                        serde_json::json!({
                            "namespace": ns, "key": e.key, "bytes": e.bytes, "used": e.used
                        }),
                    )?;
                }
            }
            Ok(())
        }
        CacheCommand::Verify { cache_dir } => {
            let (mut checked, mut bad) = (0, 0);
            for (_, path) in namespaces(cache_dir)? {
                let v = fs::verify_namespace(&path).map_err(|e| invalid(cache_dir, e))?;
                checked += v.checked;
                bad += v.bad;
            }
            w(out, serde_json::json!({"checked": checked, "bad": bad}))
        }
        CacheCommand::Clear { cache_dir } => {
            let mut removed = 0;
            for (_, path) in namespaces(cache_dir)? {
                removed += fs::clear_namespace(&path).map_err(|e| invalid(cache_dir, e))?;
            }
            let salt = cache_dir.join("salt");
            if std::fs::symlink_metadata(&salt).is_ok_and(|m| m.file_type().is_file()) {
                std::fs::remove_file(&salt).map_err(|e| invalid(cache_dir, e))?;
            }
            w(out, serde_json::json!({"removed": removed}))
        }
    }
}
