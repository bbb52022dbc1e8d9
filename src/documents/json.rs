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

/// The bytes of `x` that are a quote, a backslash or below 0x20, flagged in their high bits
/// (`x - 1` borrows through a zero byte; `x - 0x20` through a byte below 0x20 that is not above
/// 0x7f): the lowest flag is exact, the flags above it may be false.
fn stops(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let (q, b) = (x ^ (ONES * b'"' as u64), x ^ (ONES * b'\\' as u64));
    (q.wrapping_sub(ONES) & !q | b.wrapping_sub(ONES) & !b | x.wrapping_sub(ONES * 0x20) & !x) & HIGH
}

/// The character of the `\u` escape `e` begins (after its `u`), and the bytes it takes: one
/// `XXXX`, or a surrogate pair's `XXXX\uXXXX`.
fn unicode(e: &[u8]) -> Option<(char, usize)> {
    let hi = hex4(e.get(0..4)?)?;
    if !(0xD800..0xDC00).contains(&hi) {
        return Some((char::from_u32(hi)?, 4)); // a lone low surrogate is None here
    }
    if e.get(4..6)? != b"\\u" {
        return None;
    }
    let lo = hex4(e.get(6..10)?)?;
    if !(0xDC00..0xE000).contains(&lo) {
        return None;
    }
    Some((char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?, 10))
}

/// The byte each one-character escape stands for, by its letter (0: not one of them).
const SIMPLE: [u8; 256] = {
    let mut t = [0u8; 256];
    (t[b'"' as usize], t[b'\\' as usize], t[b'/' as usize]) = (b'"', b'\\', b'/');
    (t[b'b' as usize], t[b'f' as usize], t[b'n' as usize]) = (0x08, 0x0c, b'\n');
    (t[b'r' as usize], t[b't' as usize]) = (b'\r', b'\t');
    t
};

/// The text of the JSON string whose body begins at `at` in `s` (just after its opening quote),
/// unescaped into `out[..n]`: (n, where its closing quote is, whether every byte of the string
/// as written is ASCII). None when the string is not valid (unclosed, a raw control character,
/// an unknown escape, a lone surrogate); its UTF-8 is not checked here, but an all-ASCII string
/// needs no check (an escape gives a whole character), which is most strings of most corpora.
///
/// The one loop of the hot path (these records have an escape every 12 bytes or so): eight
/// bytes are copied to `out` whole and the copy is then cut at the first stop byte (`stops`),
/// so a run between two escapes costs a word copy, not a call; a one-character escape writes
/// one byte. Unescaping never lengthens a string (`\n` 2 bytes -> 1, `\uXXXX` 6 -> at most 3,
/// a pair 12 -> 4), so `out` holding the rest of `s` and one word more is enough.
///
/// (Tried and dropped: the run's end and a one-character escape taken without a branch. Each
/// word then waits for the previous one's end, and it ran 1.6x slower than this loop, whose
/// branches let the processor run ahead.)
fn unescape(s: &[u8], mut at: usize, out: &mut Vec<u8>) -> Option<(usize, usize, bool)> {
    let room = s.len() - at + 8;
    if out.len() < room {
        out.resize(room, 0);
    }
    let mut w = 0;
    // the high bits of every byte read (some past the string's end too: then a check is made
    // that was not needed, never the reverse)
    let mut high = 0u64;
    loop {
        while let Some(word) = s.get(at..at + 8) {
            out[w..w + 8].copy_from_slice(word);
            let x = u64::from_le_bytes(word.try_into().ok()?);
            high |= x;
            let flags = stops(x);
            if flags != 0 {
                let k = (flags.trailing_zeros() / 8) as usize;
                (at, w) = (at + k, w + k);
                break;
            }
            (at, w) = (at + 8, w + 8);
        }
        match *s.get(at)? {
            b'\\' => {
                let e = *s.get(at + 1)?;
                // a table, not a match: the escapes alternate (`\n\t\t`), and a jump by the
                // letter would be mispredicted about once an escape
                let one = SIMPLE[e as usize];
                if one != 0 {
                    (out[w], at, w) = (one, at + 2, w + 1);
                } else if e == b'u' {
                    let (ch, used) = unicode(s.get(at + 2..)?)?;
                    w += ch.encode_utf8(&mut out[w..w + 4]).len();
                    at += 2 + used;
                } else {
                    return None;
                }
            }
            b'"' => return Some((w, at, high & 0x8080_8080_8080_8080 == 0)),
            // a raw control character
            c if c < 0x20 => return None,
            // one of the last seven bytes, where no whole word is left
            c => (out[w], at, w, high) = (c, at + 1, w + 1, high | c as u64),
        }
    }
}

/// A string's text: its bytes in the line when it has no escape (checked as UTF-8), else
/// unescaped in the scanner's `scratch[..n]` (not checked yet, unless all ASCII: `checked`,
/// `keep`).
#[derive(Clone, Copy)]
enum Str<'a> {
    Line(&'a str),
    Scratch(usize, bool),
}

/// `b` as text: checked as UTF-8 unless the caller knows it is all ASCII (`unescape` saw the
/// high bit of every byte of the string as written; an escape gives a whole character).
#[allow(unsafe_code)]
fn text(b: &[u8], ascii: bool) -> Option<&str> {
    if ascii {
        // SAFETY: ASCII bytes are valid UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(b) })
    } else {
        std::str::from_utf8(b).ok()
    }
}

/// Where a record's field text is: in the line, or in the caller's arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found<'a> {
    Line(&'a str),
    Arena(usize, usize),
}

struct Scan<'a, 'o> {
    s: &'a [u8],
    at: usize,
    /// each string with escapes unescaped in turn (reused)
    scratch: &'o mut Vec<u8>,
    /// the field's text when it had escapes, appended
    arena: &'o mut String,
    /// the arena's length when this record began
    mark: usize,
}

impl<'a> Scan<'a, '_> {
    /// JSON's whitespace but the line break: a record is one line, and `record` scans a buffer
    /// of lines, stopping at the break (a line holding one has no JSON object on it whole, and
    /// goes to Python's parser).
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r') = self.s.get(self.at) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.s.get(self.at) == Some(&b)).then(|| self.at += 1)
    }

    /// A string (the opening quote next). Its UTF-8 is checked once, on the text, whole: the
    /// runs between escapes are cut at ASCII bytes and an escape gives a whole character, so
    /// the text is valid exactly when the string's bytes are.
    fn string(&mut self) -> Option<Str<'a>> {
        self.eat(b'"')?;
        let s: &'a [u8] = self.s;
        let start = self.at;
        let (n, quote, ascii) = unescape(s, start, self.scratch)?;
        self.at = quote + 1;
        if n == quote - start {
            // no escape (each one shortens the text)
            Some(Str::Line(text(&s[start..quote], ascii)?))
        } else {
            Some(Str::Scratch(n, ascii))
        }
    }

    /// A string's bytes, checked as UTF-8 (a key, or a value skipped).
    fn checked(&mut self) -> Option<&[u8]> {
        Some(match self.string()? {
            Str::Line(t) => t.as_bytes(),
            Str::Scratch(n, ascii) => text(&self.scratch[..n], ascii)?.as_bytes(),
        })
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
            b'"' => self.checked().map(drop),
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

    /// A field value that is a string, kept: in the line, or checked as UTF-8 and appended to
    /// the arena (where an earlier occurrence of the same key, which this one replaces, is
    /// dropped first).
    fn keep(&mut self, s: Str<'a>) -> Option<Found<'a>> {
        Some(match s {
            Str::Line(t) => Found::Line(t),
            Str::Scratch(n, ascii) => {
                self.arena.truncate(self.mark);
                self.arena.push_str(text(&self.scratch[..n], ascii)?);
                Found::Arena(self.mark, self.arena.len())
            }
        })
    }

    /// An object (the brace next), checked: None when it is not valid. Inside, with `field`:
    /// the last value of that key when it is a string, else None (absent, or another type).
    fn members(&mut self, depth: usize, field: Option<&str>) -> Option<Option<Found<'a>>> {
        self.eat(b'{')?;
        self.ws();
        let mut found: Option<Option<Found<'a>>> = None; // Some(None): present, not a string
        if self.eat(b'}').is_none() {
            loop {
                let key = self.checked()?;
                let ours = field.is_some_and(|f| f.as_bytes() == key);
                self.ws();
                self.eat(b':')?;
                self.ws();
                if ours {
                    if self.s.get(self.at) == Some(&b'"') {
                        let text = self.string()?;
                        found = Some(Some(self.keep(text)?));
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

/// Where the string value of `field` in the JSON object `line` is (see `Found`), or None to
/// leave the line to Python. A text with escapes is appended to `arena` (nothing stays appended
/// for a line that gives None); `scratch` is working space, reused from call to call.
pub fn field_into<'a>(line: &'a [u8], field: &str, scratch: &mut Vec<u8>, arena: &mut String) -> Option<Found<'a>> {
    let mark = arena.len();
    let mut s = Scan { s: line, at: 0, scratch, arena, mark };
    s.ws();
    let text = if s.s.get(s.at) == Some(&b'{') { s.members(0, Some(field)) } else { None };
    s.ws();
    match text {
        Some(Some(found)) if s.at == line.len() => Some(found),
        _ => {
            arena.truncate(mark);
            None
        }
    }
}

/// The record on the line that begins at `start` in `buf` (a buffer of lines), scanned without
/// looking for the line's end first: (`field_into` of that line, where the line's break is, or
/// `buf.len()` for a last line without one). None when the line is not one valid record with
/// that field a string (as `field_into`): the caller then finds the line's end and judges it as
/// any other line. One pass over a record instead of a search for its end and then a scan.
pub fn record<'a>(
    buf: &'a [u8],
    start: usize,
    field: &str,
    scratch: &mut Vec<u8>,
    arena: &mut String,
) -> Option<(Found<'a>, usize)> {
    let mark = arena.len();
    let mut s = Scan { s: buf, at: start, scratch, arena, mark };
    s.ws();
    let text = if s.s.get(s.at) == Some(&b'{') { s.members(0, Some(field)) } else { None };
    s.ws();
    match text {
        Some(Some(found)) if s.at == buf.len() || buf[s.at] == b'\n' => Some((found, s.at)),
        _ => {
            arena.truncate(mark);
            None
        }
    }
}

/// The string value of `field` in the JSON object `line`, or None to leave the line to Python
/// (`field_into` for one line).
pub fn field_text<'a>(line: &'a [u8], field: &str) -> Option<Cow<'a, str>> {
    let mut arena = String::new();
    Some(match field_into(line, field, &mut Vec::new(), &mut arena)? {
        Found::Line(t) => Cow::Borrowed(t),
        Found::Arena(a, b) => Cow::Owned(arena[a..b].to_owned()),
    })
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
    fn a_record_is_scanned_to_its_line_break() {
        let buf = b"{\"text\": \"a\"} \r\n{\"text\": \"b\"}x\n{\"text\":\n\"c\"}\n{\"text\": \"d\"}";
        let (mut scratch, mut arena) = (Vec::new(), String::new());
        let mut got = |at| record(buf, at, "text", &mut scratch, &mut arena).map(|(f, stop)| (format!("{f:?}"), stop));
        assert_eq!(got(0), Some(("Line(\"a\")".into(), 15)));
        assert_eq!(got(16), None); // not the object alone
        assert_eq!(got(31), None); // a line break inside the object
        assert_eq!(got(45), Some(("Line(\"d\")".into(), buf.len())));
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
        // a byte that is not UTF-8 anywhere in a string: in a word read whole, among the last
        // seven bytes, after an escape, in a key
        for line in [
            &b"{\"text\": \"\xff and then some more text\"}"[..],
            b"{\"text\": \"ab\xc3\"}",
            b"{\"text\": \"a\\n\xe9\\tb and more\"}",
            b"{\"te\xffxt\": \"a\", \"text\": \"b\"}",
        ] {
            assert_eq!(field_text(line, "text"), None, "{}", String::from_utf8_lossy(line));
        }
        assert_eq!(
            field_text("{\"text\": \"\u{e9}t\u{e9} \\n \u{1f600}\"}".as_bytes(), "text").as_deref(),
            Some("\u{e9}t\u{e9} \n \u{1f600}")
        );
        let deep = format!("{{\"a\":{}1{}, \"text\": \"x\"}}", "[".repeat(300), "]".repeat(300));
        assert_eq!(get(&deep), None);
    }
}
