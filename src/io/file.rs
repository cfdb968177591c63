//! Local files as a [`super::RangeSource`] (native only).
