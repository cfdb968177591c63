//! Formats: discovery (metadata) and chunk location, one module per format.
