//! Range I/O: the one storage abstraction every format reads through.
//!
//! - [`ByteRange`]: a `u64` byte range (bounded, offset, suffix) with its `Range` header form.
//! - [`RangeSource`]: the async trait (required: [`RangeSource::read`]; provided: reads of
//!   several ranges with bounded concurrency).
//! - [`coalesce`]: the one range-coalescing function shared by every format.
//! - [`Traffic`] / [`Counted`]: request and byte counters at the transport edge.
//! - [`retry`]: bounded retries with backoff for transient failures.
//! - [`Validated`]: answers checked against a recorded identity (size, `ETag`, `Last-Modified`).
//! - [`deadline`]: a time limit on any future (per request, per operation), on every host.
//! - [`request`]: plain requests (a `GET` without `Range`, a form `POST`) for REST APIs.
//! - transports: [`memory`], [`file`](mod@file) and [`http`] natively, `fetch` in wasm.
//! - `conformance` (tests, or the `conformance` feature): checks every source must pass.

mod answer;
mod content_range;
mod error;
mod range;
mod source;

pub mod coalesce;
pub mod deadline;
pub mod headers;
pub mod memory;
pub mod request;
pub mod retry;
pub mod traffic;
pub mod url;
pub mod validated;
pub mod window;

#[cfg(any(test, feature = "conformance"))]
pub mod conformance;

#[cfg(target_arch = "wasm32")]
pub mod fetch;
#[cfg(not(target_arch = "wasm32"))]
pub mod file;
#[cfg(not(target_arch = "wasm32"))]
pub mod http;
#[cfg(target_arch = "wasm32")]
pub mod signal;

pub mod sleep;

pub use coalesce::{coalesce_ranges, fetch_stream, read_coalesced, CoalesceOptions, CoalescePlan};
#[cfg(feature = "zarr")]
pub(crate) use content_range::Validators;
pub use content_range::DEFAULT_WHOLE_READ_LIMIT;
pub use error::{IoError, TimeoutScope};
pub use range::ByteRange;
pub use retry::{RetryConfig, Retrying};
pub use source::{read_exact, Fetched, MaybeSend, MaybeSync, RangeSource, SourceInfo};
pub use traffic::{Counted, Traffic, TrafficSnapshot};
pub use validated::Validated;
pub use window::Window;
