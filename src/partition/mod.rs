//! Blob partition of array stores for tape tiering (blobmap): pure decisions, no I/O.
