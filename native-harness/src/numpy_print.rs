//! Array values as numpy's `print(a)` shows them (`str(a)`, numpy's `array_str`), for
//! `chunkwise read --print`. The rules mirror numpy's `numpy/_core/arrayprint.py` with its
//! default print options: `threshold` 1000 (a larger array is summarised), `edgeitems` 3
//! (items kept at each end of a summarised axis, the rest shown as `...`), `linewidth` 75,
//! `precision` 8, `floatmode` `maxprec`, `suppress` false, `sign` `-`.
//!
//! - Integers are right-aligned to the widest shown value (`IntegerFormat`).
//! - Bools print as ` True` and `False` (`BoolFormat`).
//! - Floats (`FloatingFormat`): each shown value's shortest round-trip digits in its own
//!   type (float32 digits for `f4`), cut to 8 fractional digits (rounded), trailing zeros
//!   trimmed but the point kept (`1.`, `0.5`); integer and fractional parts padded to the
//!   widest shown value. Scientific notation (`1.2345e+08`, every mantissa with as many
//!   digits as the longest) when a finite non-zero magnitude is at least 1e8 or below 1e-4,
//!   or the largest is over 1000 times the smallest, compared in the array's own type.
//!   `nan`, `inf` and `-inf` are right-aligned to the same width.
//! - Only the shown items decide widths (numpy's `_leading_trailing`).
//! - Rows wrap at 75 characters; nested axes are separated by newlines, one blank line more
//!   per axis above the last two (`_formatArray`).
//! - A 0-d array prints its scalar as numpy's scalar `str` does (`1.5`, `1e-05`, `True`).
//!
//! - Byte strings (`|S{n}`) print as Python's `repr` of each, trailing NULs dropped
//!   (`[b'ab' b"it's"]`), unpadded.
//! - Unicode strings (`<U{n}`, `>U{n}`) likewise as Python's `repr` of each `str`
//!   (`['ab' 'é' '']`), trailing NUL characters dropped; a 0-d array prints the string
//!   itself (`str(np.array('ab'))` is `ab`). Line widths count characters (code points), as
//!   Python's `len` does.
//!
//! - Records (structured dtypes, HDF5 compounds; [`format_records`]) print as tuples,
//!   each member with a format filled from its own values (`StructuredVoidFormat`),
//!   sub-array members as `[a, b]` (`SubArrayFormat`).
//!
//! Complex numbers and float16 are refused (use `--out` and numpy).

use chunkwise::dtype::{ByteOrder, DType, Kind};

/// numpy's default `threshold`: arrays with more items are summarised.
pub const THRESHOLD: u64 = 1000;
/// numpy's default `edgeitems`.
pub const EDGE_ITEMS: u64 = 3;
/// numpy's default `linewidth`.
pub const LINE_WIDTH: usize = 75;
/// numpy's default `precision` (fractional digits at most).
pub const PRECISION: usize = 8;

/// One element, widened.
#[derive(Debug, Clone)]
enum Value {
    Bool(bool),
    Int(i128),
    /// The value and whether its type is float32 (shortest digits and comparisons in it).
    Float(f64, bool),
    /// A fixed-length byte string without its trailing NULs (numpy's `bytes_`).
    Bytes(Vec<u8>),
    /// A unicode string's code points without its trailing NULs (numpy's `str_`).
    Str(Vec<u32>),
}

/// `str(a)` of the C-ordered array `data` of `shape` and `dtype`, without a trailing
/// newline.
///
/// # Errors
/// A message for element types not printed here (complex, float16, byte strings, records)
/// or `data` shorter than `shape` needs.
pub fn format_array(data: &[u8], shape: &[u64], dtype: DType) -> Result<String, String> {
    let supported = match dtype.kind {
        Kind::Bool => dtype.itemsize == 1,
        Kind::Int | Kind::UInt => matches!(dtype.itemsize, 1 | 2 | 4 | 8),
        Kind::Float => matches!(dtype.itemsize, 4 | 8),
        Kind::Bytes | Kind::Unicode => true,
        _ => false,
    };
    if !supported {
        return Err(format!(
            "--print shows integers, bools, float32, float64, byte and unicode strings; this \
             is {dtype} (write it with --out and print it with numpy)"
        ));
    }
    let size = shape
        .iter()
        .try_fold(1u64, |a, &n| a.checked_mul(n))
        .ok_or("shape overflows")?;
    let need = size
        .checked_mul(dtype.itemsize as u64)
        .ok_or("shape overflows")?;
    if (data.len() as u64) < need {
        return Err(format!("{} bytes for {need}", data.len()));
    }
    let get = |i: u64| value(data, i as usize, dtype);
    if shape.is_empty() {
        return Ok(scalar_str(get(0)));
    }
    if size == 0 {
        return Ok("[]".into());
    }
    let summary = size > THRESHOLD;
    // The shown items decide the widths.
    let mut shown = Vec::new();
    visit(shape, summary, &mut |i| shown.push(get(i)));
    let fmt = Formatter::new(&shown);
    Ok(lay_out(shape, summary, &|i| fmt.format(get(i))))
}

/// numpy's `_formatArray` of `shape` with each item's text from `item` (by flat index).
fn lay_out(shape: &[u64], summary: bool, item: &dyn Fn(u64) -> String) -> String {
    let strides: Vec<u64> = (0..shape.len())
        .map(|d| shape[d + 1..].iter().product())
        .collect();
    let a = Layout {
        shape,
        strides: &strides,
        summary,
        item,
    };
    a.recurse(0, 0, " ", LINE_WIDTH)
}

/// `str(a)` of a C-ordered array of records (a numpy structured dtype: HDF5 compounds),
/// `element` describing one record: each record as `(a, b)` (`(a,)` for one member), each
/// member formatted as numpy's `StructuredVoidFormat` does, with a format filled from that
/// member's values over the shown records; sub-array members as `[x, y]` with one format
/// over all their items.
///
/// # Errors
/// As [`format_array`] for member types not printed here (complex, float16,
/// variable-length strings), or `data` shorter than `shape` needs.
pub fn format_records(
    data: &[u8],
    shape: &[u64],
    element: &chunkwise::element::Element,
) -> Result<String, String> {
    let item_size = element.stored_size();
    let size = shape
        .iter()
        .try_fold(1u64, |a, &n| a.checked_mul(n))
        .ok_or("shape overflows")?;
    let need = size
        .checked_mul(item_size as u64)
        .ok_or("shape overflows")?;
    if (data.len() as u64) < need || item_size == 0 {
        return Err(format!("{} bytes for {need}", data.len()));
    }
    let at = |i: u64| &data[i as usize * item_size..(i as usize + 1) * item_size];
    if size == 0 {
        return Ok("[]".into());
    }
    let summary = size > THRESHOLD;
    let mut shown: Vec<&[u8]> = Vec::new();
    if shape.is_empty() {
        shown.push(at(0));
    } else {
        visit(shape, summary, &mut |i| shown.push(at(i)));
    }
    let part = Part::new(element, &shown)?;
    if shape.is_empty() {
        return Ok(part.render(at(0)));
    }
    Ok(lay_out(shape, summary, &|i| part.render(at(i))))
}

/// How one member of a record is formatted.
enum Part {
    /// A number, bool or byte string, with the format of its values.
    Leaf { dtype: DType, fmt: Formatter },
    /// A fixed-shape array of `inner` items of `item` bytes.
    Sub {
        shape: Vec<u64>,
        item: usize,
        inner: Box<Part>,
    },
    /// Members at their byte offsets.
    Record(Vec<(usize, usize, Part)>),
}

impl Part {
    /// The format of `element` filled from its shown instances `items` (their bytes).
    fn new(element: &chunkwise::element::Element, items: &[&[u8]]) -> Result<Part, String> {
        use chunkwise::element::Element;
        match element {
            Element::Number(_) | Element::String { .. } => {
                let dtype = element.storage_dtype();
                // The same refusals as a plain array (complex, float16).
                format_array(&vec![0; dtype.itemsize], &[1], dtype)?;
                let values: Vec<Value> = items.iter().map(|b| value(b, 0, dtype)).collect();
                Ok(Part::Leaf {
                    dtype,
                    fmt: Formatter::new(&values),
                })
            }
            Element::SubArray { base, shape } => {
                let item = base.stored_size();
                let n: u64 = shape.iter().product();
                let subs: Vec<&[u8]> = items
                    .iter()
                    .flat_map(|b| (0..n as usize).map(move |k| &b[k * item..(k + 1) * item]))
                    .collect();
                Ok(Part::Sub {
                    shape: shape.clone(),
                    item,
                    inner: Box::new(Part::new(base, &subs)?),
                })
            }
            Element::Record { fields, .. } => {
                let mut parts = Vec::new();
                for f in fields {
                    let len = f.element.stored_size();
                    let sub: Vec<&[u8]> =
                        items.iter().map(|b| &b[f.offset..f.offset + len]).collect();
                    parts.push((f.offset, len, Part::new(&f.element, &sub)?));
                }
                Ok(Part::Record(parts))
            }
            Element::VlenString { .. } => {
                Err("--print shows no unresolved variable-length strings".into())
            }
        }
    }

    /// The text of one instance (its bytes).
    fn render(&self, b: &[u8]) -> String {
        match self {
            Part::Leaf { dtype, fmt } => fmt.format(value(b, 0, *dtype)),
            Part::Sub { shape, item, inner } => {
                fn go(shape: &[u64], b: &[u8], item: usize, inner: &Part) -> String {
                    if shape.is_empty() {
                        return inner.render(&b[..item]);
                    }
                    let step = item * shape[1..].iter().product::<u64>() as usize;
                    let parts: Vec<String> = (0..shape[0] as usize)
                        .map(|k| go(&shape[1..], &b[k * step..], item, inner))
                        .collect();
                    format!("[{}]", parts.join(", "))
                }
                go(shape, b, *item, inner)
            }
            Part::Record(parts) => {
                let fields: Vec<String> = parts
                    .iter()
                    .map(|(off, len, p)| p.render(&b[*off..off + len]))
                    .collect();
                if fields.len() == 1 {
                    format!("({},)", fields[0])
                } else {
                    format!("({})", fields.join(", "))
                }
            }
        }
    }
}

/// Calls `f` with the flat index of every shown item, in C order.
fn visit(shape: &[u64], summary: bool, f: &mut dyn FnMut(u64)) {
    fn go(shape: &[u64], axis: usize, base: u64, summary: bool, f: &mut dyn FnMut(u64)) {
        if axis == shape.len() {
            f(base);
            return;
        }
        let stride: u64 = shape[axis + 1..].iter().product();
        for i in shown_indices(shape[axis], summary) {
            go(shape, axis + 1, base + i * stride, summary, f);
        }
    }
    go(shape, 0, 0, summary, f)
}

/// The indices shown along an axis of `len`: all, or the first and last [`EDGE_ITEMS`]
/// when summarised and the axis is longer than twice that.
fn shown_indices(len: u64, summary: bool) -> Vec<u64> {
    if summary && 2 * EDGE_ITEMS < len {
        (0..EDGE_ITEMS).chain(len - EDGE_ITEMS..len).collect()
    } else {
        (0..len).collect()
    }
}

fn value(data: &[u8], i: usize, dtype: DType) -> Value {
    let n = dtype.itemsize;
    if dtype.kind == Kind::Bytes {
        let item = &data[i * n..(i + 1) * n];
        let end = item.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
        return Value::Bytes(item[..end].to_vec());
    }
    if dtype.kind == Kind::Unicode {
        let mut item = data[i * n..(i + 1) * n].to_vec();
        dtype.make_little_endian(&mut item);
        return Value::Str(chunkwise::element::ucs4_code_points(&item));
    }
    let mut b = [0u8; 8];
    b[..n].copy_from_slice(&data[i * n..(i + 1) * n]);
    if dtype.order == ByteOrder::Big {
        b[..n].reverse();
    }
    let u = u64::from_le_bytes(b);
    match (dtype.kind, n) {
        (Kind::Bool, _) => Value::Bool(u != 0),
        (Kind::UInt, _) => Value::Int(u as i128),
        (Kind::Int, _) => {
            let shift = 64 - 8 * n as u32;
            Value::Int((((u << shift) as i64) >> shift) as i128)
        }
        (Kind::Float, 4) => Value::Float(f32::from_bits(u as u32) as f64, true),
        _ => Value::Float(f64::from_bits(u), false),
    }
}

/// numpy's scalar `str`: floats in their shortest round-trip digits, positional from 1e-4
/// up to 1e16 for float64 and 1e6 for float32 (`1.0`, `0.001`), else scientific (`1e-05`,
/// `1.5e+16`); the bounds compare the exact value (a float32 0.0001 lies below 1e-4).
fn scalar_str(v: Value) -> String {
    match v {
        // numpy 2 shows a 0-d byte string array as the scalar's repr.
        Value::Bytes(b) => format!("np.bytes_({})", bytes_repr(&b)),
        // ... but a 0-d unicode array as the string itself.
        Value::Str(cps) => cps
            .iter()
            .map(|&c| char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect(),
        Value::Bool(b) => if b { "True" } else { "False" }.into(),
        Value::Int(i) => i.to_string(),
        Value::Float(x, f32) => {
            if x.is_nan() {
                return "nan".into();
            }
            if x.is_infinite() {
                return if x < 0.0 { "-inf" } else { "inf" }.into();
            }
            let a = x.abs();
            let max = if f32 { 1e6 } else { 1e16 };
            if a == 0.0 || (1e-4..max).contains(&a) {
                let s = shortest(x, f32);
                if s.contains('.') {
                    s
                } else {
                    format!("{s}.0")
                }
            } else {
                let (m, e) = shortest_sci(x, f32);
                format!("{m}e{}", exponent(e, 2))
            }
        }
    }
}

/// Python's `repr` of a `bytes` value: `b'...'` (double quotes when it holds a single quote
/// and no double quote), `\\`, `\t`, `\n`, `\r` and the quote escaped, other bytes outside
/// printable ASCII as `\xhh`.
fn bytes_repr(b: &[u8]) -> String {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    let mut s = format!("b{quote}");
    for &c in b {
        match c {
            b'\\' => s.push_str("\\\\"),
            b'\t' => s.push_str("\\t"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            c if c as char == quote => {
                s.push('\\');
                s.push(quote);
            }
            0x20..=0x7e => s.push(c as char),
            c => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push(quote);
    s
}

/// Python's `repr` of a `str` (CPython `unicode_repr`): `'...'` (double quotes when it holds
/// a single quote and no double quote), `\\`, `\t`, `\n`, `\r` and the quote escaped, other
/// ASCII controls as `\xhh`, non-ASCII code points as they are when printable, else as
/// `\xhh`, `\uhhhh` or `\Uhhhhhhhh` ([`printable`]).
fn str_repr(cps: &[u32]) -> String {
    let (sq, dq) = (u32::from(b'\''), u32::from(b'"'));
    let quote = if cps.contains(&sq) && !cps.contains(&dq) {
        '"'
    } else {
        '\''
    };
    let mut s = String::from(quote);
    for &c in cps {
        match char::from_u32(c) {
            Some('\\') => s.push_str("\\\\"),
            Some('\t') => s.push_str("\\t"),
            Some('\n') => s.push_str("\\n"),
            Some('\r') => s.push_str("\\r"),
            Some(ch) if ch == quote => {
                s.push('\\');
                s.push(quote);
            }
            Some(ch) if (' '..='~').contains(&ch) => s.push(ch),
            Some(ch) if c >= 0x80 && printable(c) => s.push(ch),
            _ if c <= 0xff => s.push_str(&format!("\\x{c:02x}")),
            _ if c <= 0xffff => s.push_str(&format!("\\u{c:04x}")),
            _ => s.push_str(&format!("\\U{c:08x}")),
        }
    }
    s.push(quote);
    s
}

/// Code points from U+0080 up that Python's `str.isprintable` refuses, other than unassigned
/// ones: the categories Cc, Cf, Cs, Co, Zs, Zl and Zp of Unicode 14.0 (Python 3.11's
/// `unicodedata`, which numpy's print() of the fixtures used), as inclusive ranges
/// generated from it.
const NOT_PRINTABLE: [(u32, u32); 27] = [
    (0x80, 0xa0),
    (0xad, 0xad),
    (0x600, 0x605),
    (0x61c, 0x61c),
    (0x6dd, 0x6dd),
    (0x70f, 0x70f),
    (0x890, 0x891),
    (0x8e2, 0x8e2),
    (0x1680, 0x1680),
    (0x180e, 0x180e),
    (0x2000, 0x200f),
    (0x2028, 0x202f),
    (0x205f, 0x2064),
    (0x2066, 0x206f),
    (0x3000, 0x3000),
    (0xd800, 0xf8ff),
    (0xfeff, 0xfeff),
    (0xfff9, 0xfffb),
    (0x110bd, 0x110bd),
    (0x110cd, 0x110cd),
    (0x13430, 0x13438),
    (0x1bca0, 0x1bca3),
    (0x1d173, 0x1d17a),
    (0xe0001, 0xe0001),
    (0xe0020, 0xe007f),
    (0xf0000, 0xffffd),
    (0x100000, 0x10fffd),
];

/// Whether Python prints the code point `c` (>= U+0080) as it is in a `repr`
/// (`Py_UNICODE_ISPRINTABLE`). Exact for assigned code points, noncharacters
/// (U+FDD0..U+FDEF, U+xxFFFE/F) and values past U+10FFFF; other unassigned code points
/// (which Python escapes) are taken as printable: no table of them is kept here.
fn printable(c: u32) -> bool {
    let nonchar = (0xfdd0..=0xfdef).contains(&c) || c & 0xfffe == 0xfffe;
    c <= 0x10ffff && !nonchar && !NOT_PRINTABLE.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// Shortest round-trip positional digits (`0.1`, `100`, `-0`). Of two candidates equally
/// near the value, the even last digit, as numpy's Dragon4 picks (Rust's shortest form
/// picks the upper one): the fractional digits are the value's exact digits rounded half
/// to even at the shortest length.
fn shortest(x: f64, f32: bool) -> String {
    let s = if f32 {
        format!("{}", x as f32)
    } else {
        format!("{x}")
    };
    match s.split_once('.') {
        Some((_, frac)) => {
            let k = frac.len();
            format!("{x:.k$}")
        }
        None => s,
    }
}

/// Shortest round-trip scientific digits as (mantissa, exponent): (`"1.5"`, 8), a tie
/// resolved to the even digit as in [`shortest`].
fn shortest_sci(x: f64, f32: bool) -> (String, i32) {
    let s = if f32 {
        format!("{:e}", x as f32)
    } else {
        format!("{x:e}")
    };
    let (m, _) = split_e(&s);
    let k = m.split_once('.').map_or(0, |(_, f)| f.len());
    split_e(&format!("{x:.k$e}"))
}

fn split_e(s: &str) -> (String, i32) {
    let (m, e) = s
        .split_once('e')
        .expect("scientific format has an exponent");
    (m.to_string(), e.parse().expect("exponent is an integer"))
}

/// `+08`, `-05`, `+100`: sign and at least `digits` digits.
fn exponent(e: i32, digits: usize) -> String {
    format!(
        "{}{:0digits$}",
        if e < 0 { '-' } else { '+' },
        e.unsigned_abs()
    )
}

/// numpy's `dragon4_positional(x, precision=8, unique=True, trim='.')`: the shortest
/// digits, rounded to [`PRECISION`] fractional digits when longer, trailing zeros trimmed,
/// the point kept. Returns (integer part with sign, fractional part).
fn positional(x: f64, f32: bool) -> (String, String) {
    let s = shortest(x, f32);
    let s = match s.split_once('.') {
        Some((_, frac)) if frac.len() > PRECISION => {
            let r = format!("{x:.PRECISION$}");
            r.trim_end_matches('0').to_string()
        }
        _ => s,
    };
    match s.split_once('.') {
        Some((i, f)) => (i.to_string(), f.trim_end_matches('0').to_string()),
        None => (s, String::new()),
    }
}

/// numpy's `dragon4_scientific(x, precision=8, unique=True, trim='.')`: (integer digit
/// with sign, fractional mantissa digits, exponent).
fn scientific(x: f64, f32: bool) -> (String, String, i32) {
    let (m, e) = shortest_sci(x, f32);
    let (m, e) = match m.split_once('.') {
        Some((_, frac)) if frac.len() > PRECISION => split_e(&format!("{x:.PRECISION$e}")),
        _ => (m, e),
    };
    match m.split_once('.') {
        Some((i, f)) => (i.to_string(), f.trim_end_matches('0').to_string(), e),
        None => (m, String::new(), e),
    }
}

/// How every shown item is formatted: numpy's `IntegerFormat`, `BoolFormat` or
/// `FloatingFormat` as filled from the shown items.
enum Formatter {
    Bool,
    /// Each item's `repr`, unpadded (numpy's `repr_format` for `bytes_`).
    Bytes,
    /// Each item's `repr`, unpadded (numpy's `repr_format` for `str_`).
    Str,
    Int {
        width: usize,
    },
    Float {
        exp: bool,
        pad_left: usize,
        pad_right: usize,
        /// Scientific: mantissa fractional digits and exponent digits.
        precision: usize,
        exp_digits: usize,
    },
}

impl Formatter {
    fn new(shown: &[Value]) -> Formatter {
        match shown.first() {
            Some(Value::Bool(_)) => Formatter::Bool,
            Some(Value::Bytes(_)) => Formatter::Bytes,
            Some(Value::Str(_)) => Formatter::Str,
            Some(Value::Int(_)) => Formatter::Int {
                width: shown
                    .iter()
                    .map(|v| match v {
                        Value::Int(i) => i.to_string().len(),
                        _ => 0,
                    })
                    .max()
                    .unwrap_or(0),
            },
            _ => Self::float(shown),
        }
    }

    fn float(shown: &[Value]) -> Formatter {
        let f32 = matches!(shown.first(), Some(Value::Float(_, true)));
        let all: Vec<f64> = shown
            .iter()
            .map(|v| match v {
                Value::Float(x, _) => *x,
                _ => 0.0,
            })
            .collect();
        let finite: Vec<f64> = all.iter().copied().filter(|x| x.is_finite()).collect();
        let nonzero: Vec<f64> = finite
            .iter()
            .filter(|x| **x != 0.0)
            .map(|x| x.abs())
            .collect();
        let mut exp = false;
        if !nonzero.is_empty() {
            let max = nonzero.iter().copied().fold(f64::MIN, f64::max);
            let min = nonzero.iter().copied().fold(f64::MAX, f64::min);
            exp = if f32 {
                // Compared as float32, as numpy compares a float32 array's values.
                let (max, min) = (max as f32, min as f32);
                max >= 1e8f32 || min < 1e-4f32 || max / min > 1000f32
            } else {
                max >= 1e8 || min < 1e-4 || max / min > 1000.0
            };
        }
        let (mut pad_left, pad_right, precision, exp_digits) = if finite.is_empty() {
            (0, 0, 0, 0)
        } else if exp {
            let parts: Vec<(String, String, i32)> =
                finite.iter().map(|x| scientific(*x, f32)).collect();
            let precision = parts.iter().map(|p| p.1.len()).max().unwrap_or(0);
            let exp_digits = parts
                .iter()
                .map(|p| p.2.unsigned_abs().to_string().len().max(2))
                .max()
                .unwrap_or(2);
            let pad_left = parts.iter().map(|p| p.0.len()).max().unwrap_or(0);
            (pad_left, exp_digits + 2 + precision, precision, exp_digits)
        } else {
            let parts: Vec<(String, String)> = finite.iter().map(|x| positional(*x, f32)).collect();
            let pad_left = parts.iter().map(|p| p.0.len()).max().unwrap_or(0);
            let pad_right = parts.iter().map(|p| p.1.len()).max().unwrap_or(0);
            (pad_left, pad_right, 0, 0)
        };
        if finite.len() != all.len() {
            let neginf = all.iter().any(|x| x.is_infinite() && *x < 0.0);
            let offset = pad_right + 1;
            let nanlen = 3usize;
            let inflen = 3 + usize::from(neginf);
            pad_left = pad_left
                .max(nanlen.saturating_sub(offset))
                .max(inflen.saturating_sub(offset));
        }
        Formatter::Float {
            exp,
            pad_left,
            pad_right,
            precision,
            exp_digits,
        }
    }

    fn format(&self, v: Value) -> String {
        match (self, v) {
            (Formatter::Bytes, Value::Bytes(b)) => bytes_repr(&b),
            (Formatter::Str, Value::Str(cps)) => str_repr(&cps),
            (Formatter::Bool, Value::Bool(b)) => if b { " True" } else { "False" }.into(),
            (Formatter::Int { width }, Value::Int(i)) => format!("{i:>width$}"),
            (
                Formatter::Float {
                    exp,
                    pad_left,
                    pad_right,
                    precision,
                    exp_digits,
                },
                Value::Float(x, f32),
            ) => {
                if !x.is_finite() {
                    let s = if x.is_nan() {
                        "nan"
                    } else if x < 0.0 {
                        "-inf"
                    } else {
                        "inf"
                    };
                    let w = pad_left + pad_right + 1;
                    return format!("{s:>w$}");
                }
                if *exp {
                    let (mut i, mut f, mut e) = scientific(x, f32);
                    if f.len() < *precision {
                        // numpy's min_digits: more digits of the exact value, rounded, not
                        // zeros.
                        let (m, exact_e) = split_e(&format!("{x:.precision$e}"));
                        let (mi, mf) = m.split_once('.').unwrap_or((&m, ""));
                        (i, f, e) = (mi.to_string(), mf.to_string(), exact_e);
                    }
                    format!(
                        "{i:>pad_left$}.{f:0<precision$}e{}",
                        exponent(e, *exp_digits)
                    )
                } else {
                    let (i, f) = positional(x, f32);
                    format!("{i:>pad_left$}.{f:<pad_right$}")
                }
            }
            // One array has one element type.
            (_, v) => scalar_str(v),
        }
    }
}

/// The array being laid out: numpy's `_formatArray` with `separator=' '` (str).
struct Layout<'a> {
    shape: &'a [u64],
    strides: &'a [u64],
    summary: bool,
    /// The text of the item at a flat index.
    item: &'a dyn Fn(u64) -> String,
}

impl Layout<'_> {
    /// numpy's `recurser(index, hanging_indent, curr_width)` at `axis`, the item at flat
    /// offset `base`.
    fn recurse(&self, axis: usize, base: u64, hanging: &str, width: usize) -> String {
        let axes_left = self.shape.len() - axis;
        if axes_left == 0 {
            return (self.item)(base);
        }
        let next_hanging = format!("{hanging} ");
        let next_width = width.saturating_sub(1);
        let len = self.shape[axis];
        let show_summary = self.summary && 2 * EDGE_ITEMS < len;
        let (leading, trailing) = if show_summary {
            (EDGE_ITEMS, EDGE_ITEMS)
        } else {
            (0, len)
        };
        let at = |i: u64| base + i * self.strides[axis];
        let mut s = String::new();
        if axes_left == 1 {
            let elem_width = width.saturating_sub(1);
            let mut line = hanging.to_string();
            let push = |s: &mut String, line: &mut String, word: &str| {
                extend_line(s, line, word, elem_width, hanging);
            };
            for i in 0..leading {
                let w = self.recurse(axis + 1, at(i), &next_hanging, next_width);
                push(&mut s, &mut line, &w);
                line.push(' ');
            }
            if show_summary {
                push(&mut s, &mut line, "...");
                line.push(' ');
            }
            for i in (2..=trailing).rev() {
                let w = self.recurse(axis + 1, at(len - i), &next_hanging, next_width);
                push(&mut s, &mut line, &w);
                line.push(' ');
            }
            let w = self.recurse(axis + 1, at(len - 1), &next_hanging, next_width);
            push(&mut s, &mut line, &w);
            s.push_str(&line);
        } else {
            let line_sep = "\n".repeat(axes_left - 1);
            for i in 0..leading {
                s.push_str(hanging);
                s.push_str(&self.recurse(axis + 1, at(i), &next_hanging, next_width));
                s.push_str(&line_sep);
            }
            if show_summary {
                s.push_str(hanging);
                s.push_str("...");
                s.push_str(&line_sep);
            }
            for i in (2..=trailing).rev() {
                s.push_str(hanging);
                s.push_str(&self.recurse(axis + 1, at(len - i), &next_hanging, next_width));
                s.push_str(&line_sep);
            }
            s.push_str(hanging);
            s.push_str(&self.recurse(axis + 1, at(len - 1), &next_hanging, next_width));
        }
        format!("[{}]", &s[hanging.len()..])
    }
}

/// numpy's `_extendLine`: appends `word` to `line`, first moving `line` into `s` when the
/// word would pass `width` (unless the line holds only its indent). Widths are Python's
/// `len`: characters, not bytes.
fn extend_line(s: &mut String, line: &mut String, word: &str, width: usize, prefix: &str) {
    let chars = |t: &str| t.chars().count();
    let wrap = chars(line) + chars(word) > width && chars(line) > chars(prefix);
    if wrap {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = prefix.to_string();
    }
    line.push_str(word);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f8(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn dt(s: &str) -> DType {
        DType::parse(s).unwrap()
    }

    // Expected strings: numpy 2.4's print() of the same arrays.
    #[test]
    fn small_cases_as_numpy_prints_them() {
        let p = |v: &[f64], shape: &[u64]| format_array(&f8(v), shape, dt("<f8")).unwrap();
        assert_eq!(p(&[0.0, 1.5, 2.25], &[3]), "[0.   1.5  2.25]");
        assert_eq!(p(&[0.0, 1.0, 2.0], &[3]), "[0. 1. 2.]");
        assert_eq!(p(&[1e-5, 1.0], &[2]), "[1.e-05 1.e+00]");
        assert_eq!(p(&[1.0 / 3.0, -2.0], &[2]), "[ 0.33333333 -2.        ]");
        assert_eq!(
            p(&[f64::NAN, 1.0, f64::NEG_INFINITY], &[3]),
            "[ nan   1. -inf]"
        );
        assert_eq!(p(&[1.5], &[]), "1.5");
        assert_eq!(p(&[1e-5], &[]), "1e-05");
        assert_eq!(p(&[0.0, 1.0, 2.0, 3.0], &[2, 2]), "[[0. 1.]\n [2. 3.]]");
        let ints: Vec<u8> = [-1i16, 20, 300]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        assert_eq!(
            format_array(&ints, &[3], dt(">i2")).unwrap(),
            "[ -1  20 300]"
        );
        assert_eq!(
            format_array(&[1, 0], &[2], dt("|b1")).unwrap(),
            "[ True False]"
        );
        assert!(format_array(&[0; 16], &[1], dt("<c16")).is_err());
        // A float32 exactly between two shortest candidates takes the even digit (the
        // literal is exact: 64235 + 13/16 is a float32).
        let v: Vec<u8> = [64235.8125_f64 as f32, 100.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(
            format_array(&v, &[2], dt("<f4")).unwrap(),
            "[64235.812   100.   ]"
        );
    }

    // Expected: numpy 2.4's print() of the same `<U5` array (Python 3.11, Unicode 14).
    #[test]
    fn unicode_strings_as_numpy_prints_them() {
        let items: [&[u32]; 16] = [
            &[0x61, 0x27, 0x62],
            &[0x78, 0x22, 0x79],
            &[0x74, 0x61, 0x62, 0x09],
            &[0x6e, 0x01],
            &[0xa0, 0x78],
            &[0x200b],
            &[0xd800],
            &[0xe9, 0x4e2d, 0x1f600],
            &[0x7f],
            &[0x10fffd],
            &[0xe000],
            &[0xfdd0],
            &[0x2028],
            &[0x5c],
            &[0x27, 0x22],
            &[0xe4, 0x00, 0x62],
        ];
        let mut le = Vec::new();
        let mut be = Vec::new();
        for cps in items {
            for k in 0..5 {
                let c = cps.get(k).copied().unwrap_or(0);
                le.extend(c.to_le_bytes());
                be.extend(c.to_be_bytes());
            }
        }
        let want = concat!(
            r#"["a'b" 'x"y' 'tab\t' 'n\x01' '\xa0x' '\u200b' '\ud800' 'é中😀' '\x7f'"#,
            "\n",
            r#" '\U0010fffd' '\ue000' '\ufdd0' '\u2028' '\\' '\'"' 'ä\x00b']"#
        );
        assert_eq!(format_array(&le, &[16], dt("<U5")).unwrap(), want);
        assert_eq!(format_array(&be, &[16], dt(">U5")).unwrap(), want);
        // A 0-d array prints the string itself.
        let one: Vec<u8> = [0xe9u32, 0].iter().flat_map(|c| c.to_le_bytes()).collect();
        assert_eq!(format_array(&one, &[], dt("<U2")).unwrap(), "é");
    }
}
