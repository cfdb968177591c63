//! Traffic counters at the transport edge: cache hits never reach them.

use super::{ByteRange, Fetched, IoError, RangeSource};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Shared counters of requests made and body bytes received (spec: "Traffic measures
/// transport activity ... not local cache reads"). Cloning shares the counters.
#[derive(Debug, Clone, Default)]
pub struct Traffic {
    inner: Arc<Counters>,
}

#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    bytes: AtomicU64,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct TrafficSnapshot {
    /// Requests sent to the transport (each attempt of a retried request counts).
    pub requests: u64,
    /// Body bytes received.
    pub bytes: u64,
}

impl TrafficSnapshot {
    /// Counts accumulated since `earlier`.
    pub fn since(&self, earlier: TrafficSnapshot) -> TrafficSnapshot {
        TrafficSnapshot {
            requests: self.requests - earlier.requests,
            bytes: self.bytes - earlier.bytes,
        }
    }
}

impl Traffic {
    /// New counters at zero.
    pub fn new() -> Self {
        Self::default()
    }
    /// Records one request that received `bytes` body bytes.
    pub fn record(&self, bytes: u64) {
        self.inner.requests.fetch_add(1, Ordering::Relaxed);
        self.inner.bytes.fetch_add(bytes, Ordering::Relaxed);
    }
    /// The current counts.
    pub fn snapshot(&self) -> TrafficSnapshot {
        TrafficSnapshot {
            requests: self.inner.requests.load(Ordering::Relaxed),
            bytes: self.inner.bytes.load(Ordering::Relaxed),
        }
    }
}

/// A [`RangeSource`] wrapper that counts every request that reaches the inner source.
/// Wrap the transport itself (inside retries), so each attempt counts.
pub struct Counted<S> {
    inner: S,
    traffic: Traffic,
}

impl<S> Counted<S> {
    /// Counts reads of `inner` into `traffic`.
    pub fn new(inner: S, traffic: Traffic) -> Self {
        Self { inner, traffic }
    }
    /// The shared counters.
    pub fn traffic(&self) -> &Traffic {
        &self.traffic
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
impl<S: RangeSource> RangeSource for Counted<S> {
    fn location(&self) -> &str {
        self.inner.location()
    }
    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
        let r = self.inner.read(range).await;
        match &r {
            Ok(f) => self.traffic.record(f.bytes.len() as u64),
            Err(IoError::Cancelled) | Err(IoError::InvalidRange { .. }) => {}
            Err(_) => self.traffic.record(0),
        }
        r
    }
}
