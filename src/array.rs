//! `RemoteArray`: the format-agnostic handle users read from.
