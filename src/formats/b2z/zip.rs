//! PLACEHOLDER (replaced by the real parser on merge): signatures only.
use std::ops::Range;
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    pub name: String,
    pub method: u16,
    pub flags: u16,
    pub crc32: u32,
    pub compressed_size: u64,
    pub size: u64,
    pub header_offset: u64,
}
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Directory {
    pub entries: Vec<Entry>,
    pub tail_range: Range<u64>,
}
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Done(Directory),
    Need(Range<u64>),
}
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZipError {
    #[error("{0}")]
    Invalid(String),
    #[error("member {member}: {detail}")]
    Unsupported { member: String, detail: String },
}
pub fn parse_directory(_len: u64, _known: &[(u64, bytes::Bytes)]) -> Result<Step, ZipError> {
    Err(ZipError::Invalid("placeholder".into()))
}
pub const TAIL_BYTES: u64 = 64 * 1024;
pub const LOCAL_HEADER_LEN: u64 = 30;
#[derive(Debug, Clone, PartialEq)]
pub enum LocalHeader {
    Data(Range<u64>),
    Need(u64),
}
impl Entry {
    pub fn check_stored(&self) -> Result<(), ZipError> {
        Ok(())
    }
    pub fn data_range(&self, _local: &[u8], _len: u64) -> Result<LocalHeader, ZipError> {
        Err(ZipError::Invalid("placeholder".into()))
    }
}
