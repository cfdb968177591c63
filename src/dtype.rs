//! numpy-style data types.
