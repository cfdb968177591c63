//! Bounded retries with backoff for transient failures.
