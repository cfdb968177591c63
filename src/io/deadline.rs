//! A time limit on a future, on every host: the future races [`super::sleep::sleep`] (tokio
//! natively, `setTimeout` in wasm, where there is no tokio), and loses its work when the time
//! runs out (it is dropped; a transport that owns a request stops it on drop).

use super::{IoError, TimeoutScope};
use std::future::Future;
use std::time::Duration;

/// Runs `fut` for at most `limit`.
///
/// # Errors
/// [`IoError::Timeout`] with `location` and `scope` when `limit` passes first (then `fut`
/// is dropped unfinished).
pub async fn within<F: Future>(
    limit: Duration,
    scope: TimeoutScope,
    location: &str,
    fut: F,
) -> Result<F::Output, IoError> {
    let timer = super::sleep::sleep(limit);
    futures::pin_mut!(fut);
    futures::pin_mut!(timer);
    match futures::future::select(fut, timer).await {
        futures::future::Either::Left((out, _)) => Ok(out),
        futures::future::Either::Right(_) => Err(IoError::Timeout {
            location: location.to_string(),
            millis: limit.as_millis().min(u64::MAX as u128) as u64,
            scope,
        }),
    }
}

/// [`within`] for an operation of the crate (an open, a read, a command): its
/// [`crate::Error`] passes through, and running out of time is
/// [`TimeoutScope::Operation`], final (retries happen inside `fut`, never around it).
///
/// # Errors
/// Those of `fut`, or `IoError::Timeout` when `limit` passes first.
pub async fn operation<T, F: Future<Output = crate::Result<T>>>(
    limit: Option<Duration>,
    location: &str,
    fut: F,
) -> crate::Result<T> {
    match limit {
        None => fut.await,
        Some(limit) => within(limit, TimeoutScope::Operation, location, fut).await?,
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_slow_future_times_out_and_a_fast_one_does_not() {
        let t = std::time::Instant::now();
        let e = within(
            Duration::from_millis(50),
            TimeoutScope::Request,
            "u",
            futures::future::pending::<()>(),
        )
        .await
        .unwrap_err();
        assert_eq!(
            e,
            IoError::Timeout {
                location: "u".into(),
                millis: 50,
                scope: TimeoutScope::Request
            }
        );
        let took = t.elapsed();
        assert!(
            took >= Duration::from_millis(50) && took < Duration::from_secs(2),
            "{took:?}"
        );
        let v = within(Duration::from_secs(5), TimeoutScope::Request, "u", async {
            7
        })
        .await;
        assert_eq!(v, Ok(7));
        let e = operation::<(), _>(
            Some(Duration::from_millis(10)),
            "u",
            futures::future::pending(),
        )
        .await
        .unwrap_err();
        assert_eq!(e.code(), "TIMEOUT");
        assert!(!matches!(e, crate::Error::Io(ref io) if io.is_transient()));
    }
}
