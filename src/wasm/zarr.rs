//! Zarr stores over `fetch`: opened by the core's opener ([`crate::open::open_zarr`]), whose
//! [`crate::open::key_opener`] makes one counted, retried `FetchSource` per object key.

pub use crate::open::open_zarr;
