//! A bounds-checked msgpack cursor over a byte slice, used by the frame header, the frame trailer
//! and the `b2nd` metalayer (all msgpack; integers big-endian, per the msgpack specification).
//!
//! Decoding of each value is delegated to the `rmp` crate; this wrapper only tracks the absolute
//! position (for error context) and returns borrowed `str`/`bin` payloads after checking their
//! claimed length against the bytes actually present, so nothing is allocated from a claimed size.

use super::frame::FrameError;

/// A msgpack reader over `buf`, starting at `pos`. Every method names the field it reads so an
/// error says what was malformed and where.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at byte `pos` of `buf`.
    pub(crate) fn new(buf: &'a [u8], pos: usize) -> Self {
        Cursor { buf, pos }
    }

    /// Absolute position (bytes from the start of `buf`) of the next value.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    fn malformed(&self, field: &'static str) -> FrameError {
        FrameError::Malformed {
            field,
            offset: self.pos,
        }
    }

    /// Runs one `rmp` decoder on the remaining bytes and advances by what it consumed.
    fn run<T, E>(
        &mut self,
        field: &'static str,
        f: impl FnOnce(&mut &'a [u8]) -> Result<T, E>,
    ) -> Result<T, FrameError> {
        let mut rd: &'a [u8] = self.rest();
        let before = rd.len();
        let out = f(&mut rd).map_err(|_| self.malformed(field))?;
        self.pos += before - rd.len();
        Ok(out)
    }

    /// An array header; returns the element count.
    pub(crate) fn array_len(&mut self, field: &'static str) -> Result<u32, FrameError> {
        self.run(field, rmp::decode::read_array_len)
    }

    /// A map header; returns the number of key/value pairs.
    pub(crate) fn map_len(&mut self, field: &'static str) -> Result<u32, FrameError> {
        self.run(field, rmp::decode::read_map_len)
    }

    /// Any msgpack integer that fits an `i64`.
    pub(crate) fn int(&mut self, field: &'static str) -> Result<i64, FrameError> {
        self.run(field, rmp::decode::read_int::<i64, _>)
    }

    /// Any msgpack integer that fits a `u64`.
    pub(crate) fn uint(&mut self, field: &'static str) -> Result<u64, FrameError> {
        self.run(field, rmp::decode::read_int::<u64, _>)
    }

    /// A boolean.
    pub(crate) fn bool(&mut self, field: &'static str) -> Result<bool, FrameError> {
        self.run(field, rmp::decode::read_bool)
    }

    /// A fixext 16: `(type, 16 data bytes)`.
    pub(crate) fn fixext16(&mut self, field: &'static str) -> Result<(i8, [u8; 16]), FrameError> {
        self.run(field, rmp::decode::read_fixext16)
    }

    /// Takes `len` raw bytes, failing if fewer remain.
    /// `at` is where the value (marker included) started, for the error.
    fn take(&mut self, field: &'static str, at: usize, len: u32) -> Result<&'a [u8], FrameError> {
        let len = len as usize;
        let rest = self.rest();
        if rest.len() < len {
            return Err(FrameError::Malformed { field, offset: at });
        }
        self.pos += len;
        Ok(&rest[..len])
    }

    /// A string's raw bytes (not checked for UTF-8).
    pub(crate) fn str_bytes(&mut self, field: &'static str) -> Result<&'a [u8], FrameError> {
        let at = self.pos;
        let len = self.run(field, rmp::decode::read_str_len)?;
        self.take(field, at, len)
    }

    /// A UTF-8 string.
    pub(crate) fn str(&mut self, field: &'static str) -> Result<&'a str, FrameError> {
        let at = self.pos;
        let bytes = self.str_bytes(field)?;
        std::str::from_utf8(bytes).map_err(|_| FrameError::Malformed { field, offset: at })
    }

    /// A bin payload.
    pub(crate) fn bin(&mut self, field: &'static str) -> Result<&'a [u8], FrameError> {
        let at = self.pos;
        let len = self.run(field, rmp::decode::read_bin_len)?;
        self.take(field, at, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_values_and_tracks_position() {
        // [int32 -5, uint64 7, "ab", bin [1,2], true]
        let bytes = [
            0x95, 0xd2, 0xff, 0xff, 0xff, 0xfb, 0xcf, 0, 0, 0, 0, 0, 0, 0, 7, 0xa2, b'a', b'b',
            0xc4, 2, 1, 2, 0xc3,
        ];
        let mut c = Cursor::new(&bytes, 0);
        assert_eq!(c.array_len("a").unwrap(), 5);
        assert_eq!(c.int("i").unwrap(), -5);
        assert_eq!(c.uint("u").unwrap(), 7);
        assert_eq!(c.str("s").unwrap(), "ab");
        assert_eq!(c.bin("b").unwrap(), &[1, 2]);
        assert!(c.bool("t").unwrap());
        assert_eq!(c.pos(), bytes.len());
    }

    #[test]
    fn claimed_lengths_beyond_the_input_are_errors() {
        // bin32 claiming 4 GiB with 1 byte present.
        let bytes = [0xc6, 0xff, 0xff, 0xff, 0xff, 0];
        let err = Cursor::new(&bytes, 0).bin("big").unwrap_err();
        assert!(matches!(
            err,
            FrameError::Malformed {
                field: "big",
                offset: 0
            }
        ));
        // Type mismatch and empty input.
        assert!(Cursor::new(&[0xa1, b'x'], 0).int("n").is_err());
        assert!(Cursor::new(&[], 0).array_len("e").is_err());
        assert!(Cursor::new(&[1, 2], 5).int("past end").is_err());
    }
}
