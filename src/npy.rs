//! `.npy` files (NumPy format: magic, version, a header dict padded to 64 bytes, C-ordered
//! data): written by `chunkwise read --out`, read by tests that compare with written arrays.

use std::io::Write;

/// Writes an array as `.npy`: `descr` is the numpy typestr (e.g. `<f8`), `shape` in elements,
/// `data` the C-ordered bytes in that dtype.
pub fn write_npy(
    mut w: impl Write,
    descr: &str,
    shape: &[u64],
    data: &[u8],
) -> std::io::Result<()> {
    let shape_txt = match shape.len() {
        0 => "()".to_string(),
        1 => format!("({},)", shape[0]),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
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

/// An array read from a `.npy` file: numpy typestr, shape and the raw C-ordered bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Npy {
    /// numpy typestr, e.g. `<f8`.
    pub descr: String,
    /// Shape (elements).
    pub shape: Vec<u64>,
    /// `product(shape) * itemsize` bytes in C order.
    pub data: Vec<u8>,
}

/// Reads a `.npy` file (versions 1.0 to 3.0, C order, simple numeric dtypes).
///
/// # Errors
/// A message naming what is malformed or unsupported (Fortran order, structured dtypes).
pub fn read_npy(bytes: &[u8]) -> Result<Npy, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file".into());
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes
        .get(start..start + hlen)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or("truncated .npy header")?;
    let field = |name: &str| -> Result<&str, String> {
        let key = format!("'{name}':");
        let at = header
            .find(&key)
            .ok_or(format!("no {name} in .npy header"))?
            + key.len();
        Ok(header[at..].trim_start())
    };
    let descr = field("descr")?;
    let descr = descr
        .strip_prefix('\'')
        .and_then(|d| d.split('\'').next())
        .ok_or("structured dtypes are not supported")?
        .to_string();
    if field("fortran_order")?.starts_with("True") {
        return Err("Fortran-ordered .npy is not supported".into());
    }
    let shape_txt = field("shape")?;
    let inner = shape_txt
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or("malformed shape")?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u64>().map_err(|e| format!("shape: {e}")))
        .collect::<Result<Vec<u64>, String>>()?;
    Ok(Npy {
        descr,
        shape,
        data: bytes[start + hlen..].to_vec(),
    })
}
