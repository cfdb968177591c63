//! HTTP range reads natively.
