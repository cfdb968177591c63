//! The cut: arrays in, blob definitions out (blobmap-partition.md, `partition`,
//! `bucket_width`).

use std::collections::{HashMap, HashSet};

use super::json::Json;
use super::model::{Array, Blob, Bucket, Manifest, ManifestFields, Pin, Policy};
use super::{PartitionError, Warning, METADATA_BASENAMES};

/// A partition result: the validated manifest and what is worth telling an operator.
#[derive(Debug, Clone, PartialEq)]
pub struct Partitioned {
    /// The new manifest. Its epoch is carried over from `previous`; use [`Manifest::bumped`]
    /// before writing a changed one.
    pub manifest: Manifest,
    /// Id collisions and arrays whose single object exceeds `t_max_bytes`, in the order met.
    pub warnings: Vec<Warning>,
}

/// Patterns for the metadata objects, never archivable: `**/zarr.json`, `**/.zarray`,
/// `**/.zgroup`, `**/.zattrs`, `**/.zmetadata`.
pub fn default_hot_always() -> Vec<String> {
    METADATA_BASENAMES
        .iter()
        .map(|n| format!("**/{n}"))
        .collect()
}

/// Objects along dimension 0 per blob for a bucketed array; at least 1.
///
/// `ideal = t_max_bytes / avg_object_bytes` (the compression seen today), `hard =
/// width_clamp × t_max_bytes / uncompressed_object_bytes` (compression gone); the smaller wins and,
/// when at least `pow2_floor`, is rounded down to a power of two so a drifting ratio does not
/// renumber blobs. Objects are shards when the array is sharded (blobmap-partition.md,
/// `bucket_width`: 2048 for the plain example, 128 for the sharded one).
pub fn bucket_width(a: &Array, policy: &Policy) -> u64 {
    width_and_warning(a, policy).0
}

fn width_and_warning(a: &Array, policy: &Policy) -> (u64, Option<Warning>) {
    let avg = a.avg_object_bytes();
    let ideal = (policy.t_max_bytes / avg).max(1);
    // u128: width_clamp × t_max_bytes can pass u64::MAX for absurd policies.
    let clamp = policy.width_clamp as u128 * policy.t_max_bytes as u128;
    let hard = (clamp / a.uncompressed_object_bytes().max(1) as u128).max(1);
    let mut width = (ideal as u128).min(hard).max(1) as u64;
    if width >= policy.pow2_floor {
        width = 1 << (63 - width.leading_zeros());
    }
    let warning = (width == 1 && avg > policy.t_max_bytes).then(|| Warning::ObjectAboveMax {
        path: a.path.clone(),
        object_bytes: avg,
    });
    (width, warning)
}

/// Compute the blob definitions for one scope (blobmap-partition.md, `partition`).
///
/// - Coordinates, arrays under `t_hot_bytes` and arrays covered by a pin of `previous` are hot
///   (`<path>/**`, or `**` for an array at the scope root), after the metadata patterns.
/// - The blobs of `previous` are carried unchanged; arrays whose chunk prefix they already claim
///   get nothing new, so growth along a bucketed dimension changes nothing.
/// - On a fresh scope (no carried blobs) whose remaining total fits `t_max_bytes`: one blob
///   `b_root` with prefix `""`.
/// - Otherwise every array above `t_max_bytes` becomes a bucketed blob `b_<path>` (see
///   [`bucket_width`]) and the rest are grouped in listing order until each group reaches
///   `t_min_bytes`; a trailing group too small to stand alone folds into the previous blob.
///   Group ids are `b_` + the sanitised prefixes joined by `_`. A colliding id gets `_2`, `_3`
///   and a [`Warning::IdCollision`].
///
/// `policy` defaults to `previous.policy`, then to [`Policy::default`]; `epoch` is carried from
/// `previous` (1 when fresh); pins are carried; `generated_at` is the caller's timestamp.
///
/// Errors: [`PartitionError::Invalid`] naming `arrays[i]` for an array that fails
/// [`Array::validate`]; a result that fails [`Manifest::new`] would be a bug in the cut.
pub fn partition(
    scope: &str,
    arrays: &[Array],
    policy: Option<&Policy>,
    previous: Option<&Manifest>,
    generated_at: &str,
) -> Result<Partitioned, PartitionError> {
    for (i, a) in arrays.iter().enumerate() {
        a.validate(&format!("arrays[{i}]"))?;
    }
    let policy = *policy
        .or(previous.map(|p| &p.policy))
        .unwrap_or(&Policy::default());
    let pinned: Vec<Pin> = previous.map(|p| p.pinned.clone()).unwrap_or_default();

    let mut hot = default_hot_always();
    let mut payload: Vec<&Array> = Vec::new();
    for a in arrays {
        let held = a.is_coordinate
            || a.total_bytes() < policy.t_hot_bytes
            || pinned.iter().any(|pin| pin.covers(&a.path));
        if held {
            hot.push(if a.path.is_empty() {
                "**".to_owned()
            } else {
                format!("{}/**", a.path)
            });
        } else {
            payload.push(a);
        }
    }

    let carried: Vec<Blob> = previous.map(|p| p.blobs.clone()).unwrap_or_default();
    let carried_prefixes: HashSet<&str> = carried
        .iter()
        .flat_map(|b| b.prefixes.iter().map(String::as_str))
        .collect();
    let unclaimed: Vec<&Array> = payload
        .into_iter()
        .filter(|a| !claimed(a, &carried_prefixes))
        .collect();
    let mut taken: HashSet<String> = carried.iter().map(|b| b.id.clone()).collect();
    let mut warnings = Vec::new();
    let fresh = carried.is_empty();
    let mut blobs = carried;
    blobs.extend(cut(&unclaimed, &policy, &mut taken, fresh, &mut warnings));

    let mut provenance: Vec<(String, Json)> = Vec::with_capacity(arrays.len());
    let mut position: HashMap<String, usize> = HashMap::with_capacity(arrays.len());
    for a in arrays {
        let key = if a.path.is_empty() { "." } else { &a.path };
        let entry = Json::Object(vec![
            ("objects".into(), Json::uint(a.nobjects())),
            (
                "objects_seen".into(),
                a.nobjects_seen.map(Json::uint).unwrap_or(Json::Null),
            ),
            ("stored_bytes".into(), Json::uint(a.total_bytes())),
            (
                "uncompressed_object_bytes".into(),
                Json::uint(a.uncompressed_object_bytes()),
            ),
            ("sharded".into(), Json::Bool(a.shards.is_some())),
            ("key_encoding".into(), Json::str(a.key_encoding.as_str())),
        ]);
        // Like a dict: a repeated path keeps its first position and its last value.
        match position.get(key) {
            Some(&i) => provenance[i].1 = entry,
            None => {
                position.insert(key.to_owned(), provenance.len());
                provenance.push((key.to_owned(), entry));
            }
        }
    }

    let mut fields = ManifestFields::new(scope, blobs, hot);
    fields.pinned = pinned;
    fields.policy = policy;
    fields.epoch = previous.map(|p| p.epoch).unwrap_or(1);
    fields.generated_at = generated_at.to_owned();
    fields.provenance = provenance;
    Ok(Partitioned {
        manifest: Manifest::new(fields)?,
        warnings,
    })
}

/// Whether a carried blob's prefix is this array's chunk prefix or an ancestor of it.
/// `carried` holds every prefix of the carried blobs, so each check costs one lookup per
/// path segment rather than one per carried blob.
fn claimed(a: &Array, carried: &HashSet<&str>) -> bool {
    let key = a.chunk_prefix();
    if carried.contains("") || carried.contains(key.as_str()) {
        return true;
    }
    key.match_indices('/')
        .any(|(i, _)| carried.contains(&key[..i]))
}

fn cut(
    arrays: &[&Array],
    policy: &Policy,
    taken: &mut HashSet<String>,
    fresh: bool,
    warnings: &mut Vec<Warning>,
) -> Vec<Blob> {
    if arrays.is_empty() {
        return Vec::new();
    }
    let total = arrays
        .iter()
        .fold(0u64, |acc, a| acc.saturating_add(a.total_bytes()));
    if fresh && total <= policy.t_max_bytes {
        // The common case, and the best one for tape: a small store is read whole, so one mount
        // beats one per variable.
        let id = uniq("b_root".into(), taken, warnings);
        return vec![Blob {
            id,
            prefixes: vec![String::new()],
            bucket: None,
        }];
    }
    let mut out = Vec::new();
    let mut small = Vec::new();
    for &a in arrays {
        if a.total_bytes() > policy.t_max_bytes {
            let (width, warning) = width_and_warning(a, policy);
            warnings.extend(warning);
            let id = uniq(format!("b_{}", ident(&a.path)), taken, warnings);
            out.push(Blob {
                id,
                prefixes: vec![a.chunk_prefix()],
                bucket: Some(Bucket {
                    index: 0,
                    width,
                    key_encoding: a.key_encoding,
                }),
            });
        } else {
            small.push(a);
        }
    }
    out.extend(coalesce(&small, policy, taken, warnings));
    out
}

/// Group neighbours in listing order until each group reaches `t_min_bytes`.
fn coalesce(
    arrays: &[&Array],
    policy: &Policy,
    taken: &mut HashSet<String>,
    warnings: &mut Vec<Warning>,
) -> Vec<Blob> {
    let mut out: Vec<Blob> = Vec::new();
    let mut group: Vec<String> = Vec::new();
    let mut size = 0u64;
    for a in arrays {
        group.push(a.chunk_prefix());
        size = size.saturating_add(a.total_bytes());
        if size >= policy.t_min_bytes {
            let prefixes = std::mem::take(&mut group);
            let id = uniq(group_id(&prefixes), taken, warnings);
            out.push(Blob {
                id,
                prefixes,
                bucket: None,
            });
            size = 0;
        }
    }
    if !group.is_empty() {
        match out.last_mut() {
            Some(last) => {
                // The tail is too small to stand alone: fold it into the last blob, whose id
                // then follows from the merged prefixes.
                taken.remove(&last.id);
                last.prefixes.append(&mut group);
                last.id = uniq(group_id(&last.prefixes), taken, warnings);
            }
            None => {
                let id = uniq(group_id(&group), taken, warnings);
                out.push(Blob {
                    id,
                    prefixes: group,
                    bucket: None,
                });
            }
        }
    }
    out
}

/// `b_` + each prefix sanitised, joined by `_` (the full prefix, so ids in a deep tree differ).
fn group_id(prefixes: &[String]) -> String {
    let parts: Vec<String> = prefixes.iter().map(|p| ident(p)).collect();
    format!("b_{}", parts.join("_"))
}

/// Sanitise a path into `[a-z0-9_]`: every character but an ASCII letter or digit becomes `_`,
/// runs of `_` collapse, edges are trimmed, letters lowercased; `root` when nothing survives.
fn ident(path: &str) -> String {
    // blobmap keeps any Unicode alphanumeric here, which its own schema then rejects on read;
    // mapping those to `_` keeps every id readable back.
    let mut out = String::with_capacity(path.len());
    for c in path.trim_matches('/').chars() {
        let c = if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            '_'
        };
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    let trimmed = out.trim_matches('_');
    if trimmed.is_empty() {
        "root".to_owned()
    } else {
        trimmed.to_owned()
    }
}

fn uniq(wanted: String, taken: &mut HashSet<String>, warnings: &mut Vec<Warning>) -> String {
    let mut candidate = wanted.clone();
    let mut n = 1u64;
    while taken.contains(&candidate) {
        n += 1;
        candidate = format!("{wanted}_{n}");
    }
    if candidate != wanted {
        warnings.push(Warning::IdCollision {
            wanted,
            used: candidate.clone(),
        });
    }
    taken.insert(candidate.clone());
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ident_sanitises_like_blobmap() {
        assert_eq!(
            ident("multiscales/zoom_9/tas/c"),
            "multiscales_zoom_9_tas_c"
        );
        assert_eq!(ident("/A--b//"), "a_b");
        assert_eq!(ident("é"), "root");
        assert_eq!(ident(""), "root");
        assert_eq!(
            group_id(&["pr/c".to_owned(), "hurs/c".to_owned()]),
            "b_pr_c_hurs_c"
        );
    }
}
