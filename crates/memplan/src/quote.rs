//! User data inside messages: escaped and cut to a bounded length, so that a
//! cell holding escape sequences cannot drive a terminal and a 1 GB cell
//! does not make a 1 GB message.

use std::fmt;

/// Characters of a quoted value shown at most; longer values are cut and
/// their total length in bytes is given.
pub const QUOTE_MAX_CHARS: usize = 64;

/// `value` for a message: control characters, invisible format characters
/// (bidirectional overrides and isolates, zero-width ones: they can make a
/// message read otherwise than it is), quotes and backslashes escaped as in
/// Rust string literals (`\n`, `\u{1b}`, `\u{202e}`), other characters as
/// they are, at most [`QUOTE_MAX_CHARS`] of them.
pub fn quoted(value: &str) -> Quoted<'_> {
    Quoted(value)
}

/// The [`Display`](fmt::Display) of [`quoted`].
#[derive(Clone, Copy, Debug)]
pub struct Quoted<'a>(&'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut chars = self.0.chars();
        for c in chars.by_ref().take(QUOTE_MAX_CHARS) {
            if c == '`' {
                write!(f, "\\`")?;
            } else if c.is_control() || is_invisible_format(c) || c == '\\' {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        if chars.next().is_some() {
            write!(f, "… ({} bytes)", self.0.len())?;
        }
        Ok(())
    }
}

/// The format characters (Unicode category Cf) a terminal shows as nothing
/// or uses to reorder text: bidirectional marks, embeddings, overrides and
/// isolates, zero-width spaces and joiners, the word joiner and invisible
/// operators, and the byte-order mark.
fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_control_characters_and_cuts_long_values() {
        assert_eq!(quoted("abc").to_string(), "abc");
        assert_eq!(quoted("a\u{1b}[31mb").to_string(), "a\\u{1b}[31mb");
        assert_eq!(quoted("nul\0").to_string(), "nul\\u{0}");
        assert_eq!(quoted("tab\there\n").to_string(), "tab\\there\\n");
        assert_eq!(quoted("é`\\").to_string(), "é\\`\\\\");
        // A right-to-left override would show `8cod` as `doc8`.
        assert_eq!(quoted("\u{202e}8cod").to_string(), "\\u{202e}8cod");
        assert_eq!(
            quoted("a\u{200b}b\u{2066}").to_string(),
            "a\\u{200b}b\\u{2066}"
        );
        let long = "x".repeat(1000);
        let shown = quoted(&long).to_string();
        assert_eq!(
            shown,
            format!("{}… (1000 bytes)", "x".repeat(QUOTE_MAX_CHARS))
        );
    }
}
