//! `.b2z` containers: python-blosc2 stores saved as a ZIP archive of stored members.

pub mod zip;
