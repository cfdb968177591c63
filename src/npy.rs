//! `.npy` files (NumPy format: magic, version, a header dict padded to 64 bytes, C-ordered
//! data): written by `chunkwise read --out`, read by tests that compare with written arrays.

use std::io::Write;

/// Writes an array as `.npy`: `descr` is the numpy typestr (e.g. `<f8`, `|S5`) or a structured
/// dtype's descr list (`[('a', '<i4'), ('b', '<f8', (3,))]`, written unquoted as numpy's
/// `dtype_to_descr` does), `shape` in elements, `data` the C-ordered bytes in that dtype.
/// Header version 1.0; 2.0 for a header too long for it; 3.0 (UTF-8) for non-ASCII names.
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
    let descr = if descr.starts_with('[') {
        descr.to_string()
    } else {
        format!("'{descr}'")
    };
    let mut header =
        format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape_txt}, }}");
    // Version 1.0 has a 2-byte header length; a long structured descr needs 2.0 (4 bytes).
    // Non-ASCII names need 3.0 (UTF-8 header, numpy `lib/format.py`).
    let v1 = header.len() < 65000;
    let version: u8 = if !header.is_ascii() {
        3
    } else if v1 {
        1
    } else {
        2
    };
    let prefix = if version == 1 { 10 } else { 12 };
    // magic (6) + version (2) + header length + header + '\n' is a multiple of 64.
    let total = prefix + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    w.write_all(b"\x93NUMPY")?;
    w.write_all(&[version, 0])?;
    if version == 1 {
        w.write_all(&(header.len() as u16).to_le_bytes())?;
    } else {
        w.write_all(&(header.len() as u32).to_le_bytes())?;
    }
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

    #[test]
    fn structured_descr_round_trips() {
        let d = "[('a', '<i4'), ('s', '|S3'), ('v', '>f4', (2,))]";
        let mut v = Vec::new();
        super::write_npy(&mut v, d, &[1], &[0u8; 15]).unwrap();
        let h = std::str::from_utf8(&v[10..]).unwrap();
        assert!(h.starts_with("{'descr': [('a', '<i4'),"));
        let n = super::read_npy(&v).unwrap();
        assert_eq!(n.descr, d);
        assert_eq!(n.data.len(), 15);
        let mut v = Vec::new();
        super::write_npy(&mut v, "|S7", &[2], &[0u8; 14]).unwrap();
        assert_eq!(super::read_npy(&v).unwrap().descr, "|S7");
    }

    #[test]
    fn unicode_descr_is_numpys() {
        // numpy: np.save of a (2,) '<U6' array writes "{'descr': '<U6', ...}" and 48 bytes.
        for d in ["<U6", ">U6"] {
            let mut v = Vec::new();
            super::write_npy(&mut v, d, &[2], &[0u8; 48]).unwrap();
            let h = std::str::from_utf8(&v[10..]).unwrap();
            assert!(h.starts_with(&format!(
                "{{'descr': '{d}', 'fortran_order': False, 'shape': (2,), }}"
            )));
            let n = super::read_npy(&v).unwrap();
            assert_eq!(
                (n.descr.as_str(), n.shape.as_slice(), n.data.len()),
                (d, &[2u64][..], 48)
            );
        }
    }
}

/// An array read from a `.npy` file: numpy typestr, shape and the raw C-ordered bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Npy {
    /// numpy typestr, e.g. `<f8`, or a structured dtype's descr list as written in the
    /// header, e.g. `[('a', '<i4'), ('b', '|S3')]`.
    pub descr: String,
    /// Shape (elements).
    pub shape: Vec<u64>,
    /// `product(shape) * itemsize` bytes in C order.
    pub data: Vec<u8>,
}

/// Reads a `.npy` file (versions 1.0 to 3.0, C order, simple numeric dtypes).
///
/// # Errors
/// A message naming what is malformed or unsupported (Fortran order).
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
    let descr = if descr.starts_with('[') {
        // A structured descr: the balanced list, as written.
        let mut depth = 0usize;
        let mut quoted = false;
        let mut end = None;
        for (i, c) in descr.char_indices() {
            match c {
                '\'' => quoted = !quoted,
                '[' | '(' if !quoted => depth += 1,
                ']' | ')' if !quoted => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = Some(i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        descr[..end.ok_or("malformed descr")?].to_string()
    } else {
        descr
            .strip_prefix('\'')
            .and_then(|d| d.split('\'').next())
            .ok_or("malformed descr")?
            .to_string()
    };
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
