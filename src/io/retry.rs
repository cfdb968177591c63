//! Bounded retries with jittered exponential backoff for transient failures.
//!
//! One rule decides what is retried: [`IoError::is_transient`] (network errors, HTTP 5xx and
//! 429, a request that timed out; every read here is an idempotent `GET`). Everything else
//! (not found, unsatisfiable ranges, a changed source, a redirect loop, cancellation, the
//! deadline of an operation) fails at once. A request that timed out has already cost its
//! whole deadline, so timeouts have a budget of their own
//! ([`RetryConfig::max_timeout_retries`], default 1): with the defaults a server that never
//! answers costs 2 × 30 s (idle timeout) and one that trickles 2 × 60 s (request deadline). [`Retrying`] wraps any
//! [`RangeSource`] and is one itself; wrap the transport in [`super::Counted`] first so that
//! each attempt is counted.
//!
//! Backoff: attempt `k` (0-based) waits a uniformly random time in `[b/2, b]` with
//! `b = min(max_backoff, initial_backoff * multiplier^k)` ("equal jitter"), so concurrent
//! clients spread out yet never retry with no pause at all. The random generator is
//! seedable ([`RetryConfig::seed`]) so tests can assert exact delays.

use super::{ByteRange, Fetched, IoError, RangeSource};
use std::sync::Mutex;
use std::time::Duration;

/// How often and how patiently to retry.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryConfig {
    /// Retries after the first attempt (so at most `max_retries + 1` attempts); default 3.
    pub max_retries: u32,
    /// Upper bound of the first backoff; default 100 ms.
    pub initial_backoff: Duration,
    /// Upper bound of any backoff; default 5 s.
    pub max_backoff: Duration,
    /// Growth of the backoff bound per attempt; default 2.
    pub multiplier: f64,
    /// Seed of the jitter generator; `None` seeds from the clock.
    pub seed: Option<u64>,
    /// Of those retries, how many may follow a timed-out request
    /// ([`IoError::is_request_timeout`]); default 1.
    pub max_timeout_retries: u32,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_retries: 3,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            multiplier: 2.0,
            seed: None,
            max_timeout_retries: 1,
        }
    }
}

/// The sequence of backoff delays of one [`RetryConfig`].
#[derive(Debug, Clone)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    multiplier: f64,
    attempt: u32,
    rng: SplitMix64,
}

impl Backoff {
    /// A fresh sequence for `config`.
    pub fn new(config: &RetryConfig) -> Self {
        Self {
            initial: config.initial_backoff,
            max: config.max_backoff,
            multiplier: if config.multiplier.is_finite() {
                config.multiplier.max(1.0)
            } else {
                1.0
            },
            attempt: 0,
            rng: SplitMix64(config.seed.unwrap_or_else(clock_seed)),
        }
    }

    /// The delay before the next retry (in `[b/2, b]`, see the module documentation).
    pub fn next_delay(&mut self) -> Duration {
        let growth = self.multiplier.powi(self.attempt.min(64) as i32);
        let bound = self.initial.as_secs_f64() * growth;
        let bound = bound.min(self.max.as_secs_f64()).max(0.0);
        self.attempt = self.attempt.saturating_add(1);
        let unit = (self.rng.next() >> 11) as f64 / (1u64 << 53) as f64; // in [0, 1)
        Duration::from_secs_f64(bound * (0.5 + 0.5 * unit))
    }
}

/// SplitMix64: a tiny, well-studied generator; jitter needs no cryptographic quality, and a
/// dependency would bring platform entropy sources that wasm32-unknown-unknown lacks.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

#[cfg(target_arch = "wasm32")]
fn clock_seed() -> u64 {
    (js_sys::Math::random() * (u64::MAX as f64)) as u64
}

/// A [`RangeSource`] that retries transient failures of `inner` (see the module docs).
pub struct Retrying<S> {
    inner: S,
    config: RetryConfig,
    // One generator per wrapper, advanced by every retry, so concurrent reads get different
    // jitter even with a fixed seed.
    rng: Mutex<SplitMix64>,
}

impl<S> Retrying<S> {
    /// Wraps `inner` with `config`.
    pub fn new(inner: S, config: RetryConfig) -> Self {
        let seed = config.seed.unwrap_or_else(clock_seed);
        Self {
            inner,
            config,
            rng: Mutex::new(SplitMix64(seed)),
        }
    }
    /// The wrapped source.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    fn backoff(&self) -> Backoff {
        let seed = self.rng.lock().unwrap_or_else(|p| p.into_inner()).next();
        Backoff::new(&RetryConfig {
            seed: Some(seed),
            ..self.config.clone()
        })
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
impl<S: RangeSource> RangeSource for Retrying<S> {
    fn location(&self) -> &str {
        self.inner.location()
    }

    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
        let mut backoff: Option<Backoff> = None;
        let mut retries = 0u32;
        let mut timeout_retries = 0u32;
        loop {
            match self.inner.read(range).await {
                Err(e)
                    if e.is_transient()
                        && retries < self.config.max_retries
                        && (!e.is_request_timeout()
                            || timeout_retries < self.config.max_timeout_retries) =>
                {
                    retries += 1;
                    timeout_retries += u32::from(e.is_request_timeout());
                    let delay = backoff.get_or_insert_with(|| self.backoff()).next_delay();
                    super::sleep::sleep(delay).await;
                }
                other => return other,
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::io::memory::MemorySource;
    use crate::io::{Counted, Traffic};
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Fails the first `fail` reads with `error`, then reads from memory.
    struct Flaky {
        inner: MemorySource,
        fail: u32,
        seen: AtomicU32,
        error: IoError,
    }

    #[async_trait::async_trait]
    impl RangeSource for Flaky {
        fn location(&self) -> &str {
            self.inner.location()
        }
        async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
            if self.seen.fetch_add(1, Ordering::SeqCst) < self.fail {
                return Err(self.error.clone());
            }
            self.inner.read(range).await
        }
    }

    fn flaky(fail: u32, error: IoError) -> Counted<Flaky> {
        let data: Vec<u8> = (0..100u8).collect();
        Counted::new(
            Flaky {
                inner: MemorySource::new("flaky", data),
                fail,
                seen: AtomicU32::new(0),
                error,
            },
            Traffic::new(),
        )
    }

    fn fast(max_retries: u32) -> RetryConfig {
        RetryConfig {
            max_retries,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(4),
            multiplier: 2.0,
            seed: Some(7),
            max_timeout_retries: 1,
        }
    }

    fn status(s: u16) -> IoError {
        IoError::HttpStatus {
            location: "flaky".into(),
            status: s,
        }
    }

    #[tokio::test]
    async fn retries_transient_errors_until_success() {
        let src = Retrying::new(flaky(2, status(503)), fast(3));
        let f = src.read(ByteRange::bounded(10..20)).await.unwrap();
        assert_eq!(&f.bytes[..], &(10..20u8).collect::<Vec<_>>()[..]);
        assert_eq!(src.inner().traffic().snapshot().requests, 3);
    }

    #[tokio::test]
    async fn gives_up_after_max_retries() {
        let src = Retrying::new(flaky(10, status(429)), fast(2));
        assert_eq!(
            src.read(ByteRange::bounded(0..1)).await.unwrap_err(),
            status(429)
        );
        assert_eq!(src.inner().traffic().snapshot().requests, 3);
    }

    #[tokio::test]
    async fn does_not_retry_permanent_errors() {
        for e in [
            status(404),
            IoError::NotFound {
                location: "x".into(),
            },
            IoError::RangeNotSatisfiable {
                location: "x".into(),
                range: "bytes=0-0".into(),
                len: 0,
            },
        ] {
            let src = Retrying::new(flaky(1, e.clone()), fast(5));
            assert_eq!(src.read(ByteRange::bounded(0..1)).await.unwrap_err(), e);
            assert_eq!(src.inner().traffic().snapshot().requests, 1);
        }
    }

    #[tokio::test]
    async fn network_errors_are_retried_in_read_many() {
        let net = IoError::Network {
            location: "flaky".into(),
            message: "reset".into(),
        };
        let src = Retrying::new(flaky(1, net), fast(1));
        let got = src.read_many(&[0..2, 50..52], 2).await.unwrap();
        assert_eq!(
            got,
            vec![
                bytes::Bytes::from_static(&[0, 1]),
                bytes::Bytes::from_static(&[50, 51])
            ]
        );
        assert_eq!(src.inner().traffic().snapshot().requests, 3);
    }

    #[tokio::test]
    async fn request_timeouts_have_their_own_budget_and_operation_timeouts_none() {
        let timeout = |scope| IoError::Timeout {
            location: "flaky".into(),
            millis: 5,
            scope,
        };
        use crate::io::TimeoutScope::{Idle, Operation, Request};
        // One retry after a timeout by default, although three retries are allowed.
        for scope in [Idle, Request] {
            let src = Retrying::new(flaky(10, timeout(scope)), fast(3));
            assert_eq!(
                src.read(ByteRange::bounded(0..1)).await.unwrap_err(),
                timeout(scope)
            );
            assert_eq!(src.inner().traffic().snapshot().requests, 2);
        }
        let src = Retrying::new(flaky(1, timeout(Request)), fast(3));
        assert!(src.read(ByteRange::bounded(0..1)).await.is_ok());
        assert_eq!(src.inner().traffic().snapshot().requests, 2);
        let src = Retrying::new(
            flaky(10, timeout(Request)),
            RetryConfig {
                max_timeout_retries: 0,
                ..fast(3)
            },
        );
        assert!(src.read(ByteRange::bounded(0..1)).await.is_err());
        assert_eq!(src.inner().traffic().snapshot().requests, 1);
        let src = Retrying::new(flaky(10, timeout(Operation)), fast(3));
        assert!(src.read(ByteRange::bounded(0..1)).await.is_err());
        assert_eq!(src.inner().traffic().snapshot().requests, 1);
        let redirect = IoError::Redirect {
            location: "flaky".into(),
            message: "loop".into(),
        };
        let src = Retrying::new(flaky(10, redirect), fast(3));
        assert!(src.read(ByteRange::bounded(0..1)).await.is_err());
        assert_eq!(src.inner().traffic().snapshot().requests, 1);
    }

    #[test]
    fn backoff_is_jittered_bounded_and_seedable() {
        let config = RetryConfig {
            max_retries: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
            multiplier: 2.0,
            seed: Some(1),
            max_timeout_retries: 1,
        };
        let delays: Vec<Duration> = {
            let mut b = Backoff::new(&config);
            (0..8).map(|_| b.next_delay()).collect()
        };
        let again: Vec<Duration> = {
            let mut b = Backoff::new(&config);
            (0..8).map(|_| b.next_delay()).collect()
        };
        assert_eq!(delays, again, "same seed, same delays");
        let bounds = [100u64, 200, 400, 800, 1000, 1000, 1000, 1000];
        for (d, b) in delays.iter().zip(bounds) {
            let b = Duration::from_millis(b);
            assert!(*d >= b / 2 && *d <= b, "{d:?} not in [{:?}, {b:?}]", b / 2);
        }
        let mut other = Backoff::new(&RetryConfig {
            seed: Some(2),
            ..config
        });
        assert_ne!(other.next_delay(), delays[0], "another seed, other jitter");
    }

    #[tokio::test]
    async fn passes_conformance_over_a_flaky_source() {
        let data: Vec<u8> = (0..100u8).collect();
        // Every fifth read fails once: conformance still holds through the retries.
        struct EveryFifth(MemorySource, AtomicU32);
        #[async_trait::async_trait]
        impl RangeSource for EveryFifth {
            fn location(&self) -> &str {
                self.0.location()
            }
            async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
                if self.1.fetch_add(1, Ordering::SeqCst) % 5 == 4 {
                    return Err(IoError::HttpStatus {
                        location: "m".into(),
                        status: 502,
                    });
                }
                self.0.read(range).await
            }
        }
        let src = Retrying::new(
            EveryFifth(MemorySource::new("m", data.clone()), AtomicU32::new(0)),
            fast(2),
        );
        crate::io::conformance::check_source(&src, &data).await;
    }
}
