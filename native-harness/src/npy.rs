//! Writing `.npy` files (NumPy format version 1.0: magic, header dict padded to 64 bytes,
//! C-ordered data), so `numpy.load` reads what `chunkwise read --out` wrote.

use std::io::Write;

/// Writes an array as `.npy`: `descr` is the numpy typestr (e.g. `<f8`), `shape` in elements,
/// `data` the C-ordered bytes in that dtype.
pub fn write_npy(mut w: impl Write, descr: &str, shape: &[u64], data: &[u8]) -> std::io::Result<()> {
    let shape_txt = match shape.len() {
        0 => "()".to_string(),
        1 => format!("({},)", shape[0]),
        _ => format!("({})", shape.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_txt}, }}");
    // magic (6) + version (2) + header length (2) + header + '\n' is a multiple of 64.
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    w.write_all(b"\x93NUMPY\x01\x00")?;
    w.write_all(&(header.len() as u16).to_le_bytes())?;
    w.write_all(header.as_bytes())?;
    w.write_all(data)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn header_is_aligned() {
        let mut v = Vec::new();
        super::write_npy(&mut v, "<f8", &[2, 3], &[0u8; 48]).unwrap();
        let hlen = u16::from_le_bytes([v[8], v[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        assert_eq!(v.len(), 10 + hlen + 48);
        let h = std::str::from_utf8(&v[10..10 + hlen]).unwrap();
        assert!(h.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"));
        assert!(h.ends_with('\n'));
    }
}
