//! Which request headers may be sent: RFC 9110 §5.1 (a field name is a token) and §5.5 (a
//! field value is visible ASCII, spaces and tabs). Checked before any request, so a bad
//! header is an argument error, and the reason never repeats the value (a token read from a
//! file with its trailing newline would otherwise be printed).

/// Whether `c` may appear in a field name (`tchar`, RFC 9110 §5.6.2).
fn tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Why the header `name: value` cannot be sent, or `Ok` if it can. The reason names neither
/// the value nor an invalid name.
///
/// # Errors
/// A static reason: an empty or invalid name, or a value with control or non-ASCII
/// characters (a newline included).
pub fn check_header(name: &str, value: &str) -> Result<(), &'static str> {
    if name.is_empty() || !name.chars().all(tchar) {
        return Err("has no valid name (letters, digits and !#$%&'*+-.^_`|~)");
    }
    if !value.chars().all(|c| c == '\t' || (' '..='~').contains(&c)) {
        return Err("has a value with control or non-ASCII characters");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_header;

    #[test]
    fn names_are_tokens_and_values_visible_ascii() {
        assert!(check_header("Authorization", "Bearer abc.def").is_ok());
        assert!(check_header("X-K", "a\tb c").is_ok());
        assert!(check_header("Bad Name", "v").is_err());
        assert!(check_header("", "v").is_err());
        assert!(check_header("X-K", "tok\n").is_err());
        assert!(check_header("X-K", "caf\u{e9}").is_err());
        let why = check_header("X-K", "SECRET\n").unwrap_err();
        assert!(!why.contains("SECRET"));
    }
}
