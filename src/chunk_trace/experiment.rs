//! The chunk-cache experiment (spec `hdf5-chunk-cache-experiment.md`): a 64 x 64 `uint32` array
//! in four 32 x 32 gzip-6 chunks, 32 scalar selections, six cache settings.

use serde::{Deserialize, Serialize};

use super::cache::CacheConfig;
use super::geometry::{ChunkGeometry, StoredChunk};
use super::trace::ExperimentOrder;

/// Stored chunk sizes in bytes of chunks A (0,0), B (0,1), C (1,0), D (1,1) as the experiment's
/// zlib wrote them (values `0..4096` in row-major order, gzip level 6); 5,328 bytes in total.
pub const EXPERIMENT_STORED_SIZES: [u64; 4] = [1335, 1334, 1325, 1334];

/// One row of the experiment table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ExperimentCase {
    /// Visiting order.
    pub order: ExperimentOrder,
    /// Cache settings (w0 is 0 throughout).
    pub config: CacheConfig,
    /// Raw chunk reads measured with HDF5 1.10.8, 1.14.6 and 2.0.0.
    pub expected_reads: u64,
}

const fn case(order: ExperimentOrder, nslots: u64, nbytes: u64, reads: u64) -> ExperimentCase {
    ExperimentCase {
        order,
        config: CacheConfig {
            nslots,
            nbytes,
            w0: 0.0,
        },
        expected_reads: reads,
    }
}

/// The six cases of the experiment table, in its order.
pub const EXPERIMENT_CASES: [ExperimentCase; 6] = [
    case(ExperimentOrder::RoundRobin, 17, 16384, 4),
    case(ExperimentOrder::RoundRobin, 1, 16384, 32),
    case(ExperimentOrder::Grouped, 1, 4096, 4),
    case(ExperimentOrder::RoundRobin, 17, 2048, 32),
    case(ExperimentOrder::Grouped, 17, 2048, 32),
    case(ExperimentOrder::RoundRobin, 17, 4096, 32),
];

/// The experiment's geometry with the given stored sizes of chunks A, B, C, D.
pub fn experiment_geometry(stored_sizes: [u64; 4]) -> ChunkGeometry {
    let coords = [[0u64, 0u64], [0, 1], [1, 0], [1, 1]];
    ChunkGeometry {
        shape: vec![64, 64],
        chunk_shape: vec![32, 32],
        element_size: 4,
        filtered: true,
        chunks: coords
            .iter()
            .zip(stored_sizes)
            .map(|(c, s)| StoredChunk {
                coords: c.to_vec(),
                address: None,
                stored_size: s,
            })
            .collect(),
        default_stored_size: None,
    }
}
