//! The text of one field of a JSON Lines record, read without building the record: the fast path
//! of `tokreg tokenize` over JSON Lines.
//!
//! It takes only what Python's `json.loads` takes the same way: the line must be one JSON object
//! by RFC 8259 (whitespace ` \t\n\r` only; no raw control character in a string; `\uXXXX`
//! surrogates in pairs), whose field `field` (its last occurrence, as a dict keeps it, keys
//! compared after unescaping) is a string. Anything else — not JSON, another top-level value, a
//! missing or non-string field, a lone surrogate, Python's extensions (`NaN`, `Infinity`), a
//! byte-order mark, nesting deeper than `MAX_DEPTH` — is `None`: the caller hands that line to
//! Python's own parser, which gives the exact text or the exact refusal. So this scanner can
//! only be slower than it might be, never different.
//!
//! Example: `{"id": 7, "text": "a\nb"}` with field `text` gives `Some("a\nb")` (a real line
//! break); `{"text": NaN}` gives `None`.

use std::borrow::Cow;

/// Deeper nesting than this is left to Python.
const MAX_DEPTH: usize = 256;

/// Four hex digits' value.
fn hex4(h: &[u8]) -> Option<u32> {
    h.iter().try_fold(0u32, |v, &c| Some(v * 16 + (c as char).to_digit(16)?))
}

/// Where the first quote, backslash or byte below 0x20 is in `s` at or after `at`. Eight bytes
/// at a time: a byte is flagged in the word's high bits (`x - 1` borrows through a zero byte;
/// `x - 0x20` through a byte below 0x20 that is not above 0x7f); flags above the lowest may be
/// false, the lowest never is.
fn stop(s: &[u8], mut at: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(w) = s.get(at..at + 8) {
        let x = u64::from_le_bytes(w.try_into().ok()?);
        let (q, b) = (x ^ (ONES * b'"' as u64), x ^ (ONES * b'\\' as u64));
        let flags = (q.wrapping_sub(ONES) & !q | b.wrapping_sub(ONES) & !b | x.wrapping_sub(ONES * 0x20) & !x) & HIGH;
        if flags != 0 {
            return Some(at + (flags.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    s.get(at..)?.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).map(|k| at + k)
}

/// The character of the escape `e` begins (after its backslash), and the bytes it takes.
fn escape(e: &[u8]) -> Option<(char, usize)> {
    Some(match *e.first()? {
        b'"' => ('"', 1),
        b'\\' => ('\\', 1),
        b'/' => ('/', 1),
        b'b' => ('\u{8}', 1),
        b'f' => ('\u{c}', 1),
        b'n' => ('\n', 1),
        b'r' => ('\r', 1),
        b't' => ('\t', 1),
        b'u' => {
            let hi = hex4(e.get(1..5)?)?;
            if !(0xD800..0xDC00).contains(&hi) {
                return Some((char::from_u32(hi)?, 5)); // a lone low surrogate is None here
            }
            if e.get(5..7)? != b"\\u" {
                return None;
            }
            let lo = hex4(e.get(7..11)?)?;
            if !(0xDC00..0xE000).contains(&lo) {
                return None;
            }
            (char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?, 11)
        }
        _ => return None,
    })
}

struct Scan<'a> {
    s: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.at) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.s.get(self.at) == Some(&b)).then(|| self.at += 1)
    }

    /// A string (the opening quote next); its text, borrowed when it has no escape.
    ///
    /// One pass, eight bytes at a time (`stop`), to the next quote, backslash or raw control
    /// character: the runs between escapes are copied whole, and the text is checked as UTF-8
    /// once at the end (the runs are cut at ASCII bytes, and an escape gives a whole character,
    /// so the joined text is valid exactly when every run is).
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let s = self.s;
        let start = self.at;
        let mut at = start;
        let mut run = start; // where the text not yet copied begins
        let mut out: Option<Vec<u8>> = None; // once the string has an escape
        loop {
            at = stop(s, at)?;
            match s[at] {
                b'"' => break,
                b'\\' => {}
                _ => return None, // a raw control character
            }
            let o = out.get_or_insert_with(|| Vec::with_capacity(s.len() - start));
            o.extend_from_slice(&s[run..at]);
            let (c, used) = escape(s.get(at + 1..)?)?;
            o.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            at += 1 + used;
            run = at;
        }
        self.at = at + 1;
        match out {
            None => Some(Cow::Borrowed(std::str::from_utf8(&s[start..at]).ok()?)),
            Some(mut o) => {
                o.extend_from_slice(&s[run..at]);
                Some(Cow::Owned(String::from_utf8(o).ok()?))
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Option<()> {
        let _ = self.eat(b'-');
        if self.eat(b'0').is_none() && self.digits() == 0 {
            return None;
        }
        if self.eat(b'.').is_some() && self.digits() == 0 {
            return None;
        }
        if let Some(b'e' | b'E') = self.s.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.s.get(self.at) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(())
    }

    /// Any value, skipped (checked, not kept).
    fn value(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match *self.s.get(self.at)? {
            b'"' => self.string().map(drop),
            b'{' => self.members(depth, None).map(drop),
            b'[' => {
                self.at += 1;
                self.ws();
                if self.eat(b']').is_some() {
                    return Some(());
                }
                loop {
                    self.value(depth + 1)?;
                    self.ws();
                    if self.eat(b']').is_some() {
                        return Some(());
                    }
                    self.eat(b',')?;
                    self.ws();
                }
            }
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => self.number(),
        }
    }

    fn word(&mut self, w: &[u8]) -> Option<()> {
        (self.s.get(self.at..self.at + w.len()) == Some(w)).then(|| self.at += w.len())
    }

    /// An object (the brace next), checked: None when it is not valid. Inside, with `field`:
    /// the last value of that key when it is a string, else None (absent, or another type).
    fn members(&mut self, depth: usize, field: Option<&str>) -> Option<Option<Cow<'a, str>>> {
        self.eat(b'{')?;
        self.ws();
        let mut found: Option<Option<Cow<'a, str>>> = None; // Some(None): present, not a string
        if self.eat(b'}').is_none() {
            loop {
                let key = self.string()?;
                self.ws();
                self.eat(b':')?;
                self.ws();
                if field.is_some_and(|f| f == key) {
                    if self.s.get(self.at) == Some(&b'"') {
                        found = Some(Some(self.string()?));
                    } else {
                        self.value(depth + 1)?;
                        found = Some(None);
                    }
                } else {
                    self.value(depth + 1)?;
                }
                self.ws();
                if self.eat(b'}').is_some() {
                    break;
                }
                self.eat(b',')?;
                self.ws();
            }
        }
        Some(found.flatten())
    }
}

/// The string value of `field` in the JSON object `line`, or None to leave the line to Python.
pub fn field_text<'a>(line: &'a [u8], field: &str) -> Option<Cow<'a, str>> {
    let mut s = Scan { s: line, at: 0 };
    s.ws();
    if s.s.get(s.at) != Some(&b'{') {
        return None;
    }
    let text = s.members(0, Some(field))?;
    s.ws();
    (s.at == line.len()).then_some(text).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(line: &str) -> Option<String> {
        field_text(line.as_bytes(), "text").map(Cow::into_owned)
    }

    #[test]
    fn the_field_of_valid_records() {
        assert_eq!(get(r#"{"text": "In the beginning"}"#).as_deref(), Some("In the beginning"));
        assert_eq!(
            get(r#" {"id":-1.5e+3,"a":[1,{"b":null}],"text":"a\nb\u00e9\ud83d\ude00\"\\\/"} "#).as_deref(),
            Some("a\nb\u{e9}\u{1f600}\"\\/")
        );
        assert_eq!(get(r#"{"text":"one","te\u0078t":"two"}"#).as_deref(), Some("two"));
        assert_eq!(get(r#"{"text":""}"#).as_deref(), Some(""));
        assert_eq!(get("{\"text\":\"caf\u{e9}\"}\r").as_deref(), Some("caf\u{e9}"));
    }

    #[test]
    fn anything_unusual_is_left_to_python() {
        for line in [
            r#"{"text": "broken"#,
            r#"{"body": "no text"}"#,
            r#"{"text": 5}"#,
            r#"{"text": "a"} x"#,
            r#"["text"]"#,
            r#"{"text": "\ud800"}"#,
            r#"{"text": "\udc00x"}"#,
            r#"{"text": "a", "n": NaN}"#,
            r#"{"text": "a", "n": 01}"#,
            r#"{"text": "a", "n": 1.}"#,
            r#"{"text": "a",}"#,
            "{\"text\": \"tab\there\"}",
            "\u{feff}{\"text\": \"a\"}",
            r#"{"text": "\x"}"#,
        ] {
            assert_eq!(get(line), None, "{line}");
        }
        assert_eq!(field_text(b"{\"text\": \"caf\xe9\"}", "text"), None);
        let deep = format!("{{\"a\":{}1{}, \"text\": \"x\"}}", "[".repeat(300), "]".repeat(300));
        assert_eq!(get(&deep), None);
    }
}
