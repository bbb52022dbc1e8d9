//! The bulk of a `--format tokreg` file (tokreg/formats/tokreg_file.py), read without a Python
//! object per token: the top-level object split into its members, and its `tokens` and `merges`
//! arrays turned straight into the record layout of canonical content (`crate::content`).
//!
//! The file is JSON (RFC 8259), read as strictly as tokreg's other JSON (formats/strict_json.py):
//! UTF-8 only, no NaN or Infinity, no lone surrogate in a string, no key twice in the top-level
//! object (the Python side checks the small members, config included, with its own strict
//! parser), no nesting deeper than `MAX_DEPTH`. A token is `[id, kind, base64 bytes, score or
//! null]`, a merge `[left, right, result]`; ids are 0..=u32::MAX, kinds ASCII, scores finite.
//! cl100k's 5 MB file reads in a few milliseconds this way; through `json.loads` and a Python
//! object per token it took a second.

use std::borrow::Cow;

use crate::content;
use crate::error::CoreError;

/// Deeper than any member of a tokreg file nests; the same bound as strict_json.py's.
const MAX_DEPTH: usize = 64;

/// What `ids must be ...` says wherever an id is out of range, as content.py says it.
const ID_RANGE: &str = content::RECORD_RANGE;

struct Json<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Json<'a> {
    fn err(&self, what: impl std::fmt::Display) -> CoreError {
        CoreError::input(format!("{what} at byte {}", self.i))
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8, what: &str) -> Result<(), CoreError> {
        self.ws();
        if self.peek() != Some(c) {
            return Err(self.err(format!("expected {what}")));
        }
        self.i += 1;
        Ok(())
    }

    /// `,` (true) or the closing `close` (false) after an element.
    fn next_or_end(&mut self, close: u8) -> Result<bool, CoreError> {
        self.ws();
        match self.peek() {
            Some(b',') => {
                self.i += 1;
                Ok(true)
            }
            Some(c) if c == close => {
                self.i += 1;
                Ok(false)
            }
            _ => Err(self.err(format!("expected ',' or '{}'", close as char))),
        }
    }

    /// A string, decoded (borrowed when it has no escapes). The input is known to be UTF-8.
    fn string(&mut self) -> Result<Cow<'a, str>, CoreError> {
        self.expect(b'"', "a string")?;
        let start = self.i;
        let mut out: Option<String> = None;
        let mut run = start;
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Err(self.err("an unterminated string"));
            };
            match c {
                b'"' => {
                    let tail = std::str::from_utf8(&self.s[run..self.i]).expect("checked UTF-8");
                    self.i += 1;
                    return Ok(match out {
                        None => Cow::Borrowed(tail),
                        Some(mut o) => {
                            o.push_str(tail);
                            Cow::Owned(o)
                        }
                    });
                }
                b'\\' => {
                    let o = out.get_or_insert_with(String::new);
                    o.push_str(std::str::from_utf8(&self.s[run..self.i]).expect("checked UTF-8"));
                    self.i += 1;
                    let e = self.peek().ok_or_else(|| self.err("an unterminated string"))?;
                    self.i += 1;
                    match e {
                        b'"' => o.push('"'),
                        b'\\' => o.push('\\'),
                        b'/' => o.push('/'),
                        b'b' => o.push('\u{8}'),
                        b'f' => o.push('\u{c}'),
                        b'n' => o.push('\n'),
                        b'r' => o.push('\r'),
                        b't' => o.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) && self.s[self.i..].starts_with(b"\\u") {
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.err("a string holds a lone surrogate"));
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            o.push(char::from_u32(code).ok_or_else(|| self.err("a string holds a lone surrogate"))?);
                        }
                        _ => return Err(self.err("an invalid escape in a string")),
                    }
                    run = self.i;
                }
                0..=0x1f => return Err(self.err("a control character in a string")),
                _ => self.i += 1,
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, CoreError> {
        let h = self.s.get(self.i..self.i + 4).ok_or_else(|| self.err("an invalid \\u escape"))?;
        let h = std::str::from_utf8(h).ok().and_then(|h| u32::from_str_radix(h, 16).ok());
        let h = h.filter(|_| self.s[self.i..self.i + 4].iter().all(u8::is_ascii_hexdigit));
        self.i += 4;
        h.ok_or_else(|| self.err("an invalid \\u escape"))
    }

    /// The text of a number (JSON's grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`)
    /// and whether it is an integer (no fraction, no exponent).
    fn number(&mut self) -> Result<(&'a str, bool), CoreError> {
        self.ws();
        let start = self.i;
        let digits = |p: &mut Json<'a>| {
            let d = p.i;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.i += 1;
            }
            p.i - d
        };
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let lead = self.peek();
        let n = digits(self);
        if n == 0 || (lead == Some(b'0') && n > 1) {
            self.i = start;
            return Err(self.err("expected a number"));
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            self.i += 1;
            integer = false;
            if digits(self) == 0 {
                return Err(self.err("expected a number"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            integer = false;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if digits(self) == 0 {
                return Err(self.err("expected a number"));
            }
        }
        Ok((std::str::from_utf8(&self.s[start..self.i]).expect("ASCII"), integer))
    }

    /// An id: an integer 0..=u32::MAX.
    fn id(&mut self) -> Result<u32, CoreError> {
        let (text, integer) = self.number()?;
        if !integer {
            return Err(self.err(format!("{text:.30} is not an integer")));
        }
        text.parse().map_err(|_| CoreError::input(ID_RANGE))
    }

    /// A value skipped, by its brackets and strings; whoever reads it checks it.
    fn skip(&mut self) -> Result<(), CoreError> {
        self.ws();
        match self.peek() {
            Some(b'"') => {
                self.string()?;
            }
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                loop {
                    match self.peek() {
                        None => return Err(self.err("an unterminated array or object")),
                        Some(b'"') => {
                            self.string()?;
                            continue;
                        }
                        Some(b'{' | b'[') => {
                            depth += 1;
                            if depth > MAX_DEPTH {
                                return Err(self.err(format!("it nests deeper than {MAX_DEPTH} levels")));
                            }
                        }
                        Some(b'}' | b']') => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Ok(());
                            }
                        }
                        Some(_) => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                let start = self.i;
                while !matches!(self.peek(), None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')) {
                    self.i += 1;
                }
                if self.i == start {
                    return Err(self.err("expected a value"));
                }
            }
        }
        Ok(())
    }

    fn at_array(&mut self, start: usize, end: usize, what: &str) -> Result<bool, CoreError> {
        self.i = start;
        self.s = &self.s[..end];
        self.expect(b'[', &format!("{what} as a list"))?;
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(false);
        }
        Ok(true)
    }
}

/// The members of the top-level object: (key, start, end) of each value, in file order (a key
/// given twice is listed twice: the caller refuses it).
pub fn members(data: &[u8]) -> Result<Vec<(String, usize, usize)>, CoreError> {
    if let Err(e) = std::str::from_utf8(data) {
        return Err(CoreError::input(format!("not UTF-8 at byte {}", e.valid_up_to())));
    }
    let mut p = Json { s: data, i: 0 };
    p.expect(b'{', "a JSON object")?;
    let mut out = Vec::new();
    p.ws();
    if p.peek() == Some(b'}') {
        p.i += 1;
    } else {
        loop {
            p.ws();
            let key = p.string()?.into_owned();
            p.expect(b':', "':'")?;
            p.ws();
            let start = p.i;
            p.skip()?;
            out.push((key, start, p.i));
            if !p.next_or_end(b'}')? {
                break;
            }
        }
    }
    p.ws();
    if p.i != data.len() {
        return Err(p.err("extra data after the object"));
    }
    Ok(out)
}

/// The `tokens` array at `data[start..end]` as canonical token records (the bytes after
/// content's `tokens N` line) and their number.
pub fn token_records(data: &[u8], start: usize, end: usize) -> Result<(usize, Vec<u8>), CoreError> {
    let mut p = Json { s: data, i: 0 };
    let mut out = Vec::with_capacity((end - start) * 3 / 4);
    let mut n = 0usize;
    let mut more = p.at_array(start, end, "tokens")?;
    let mut bytes = Vec::new();
    while more {
        p.expect(b'[', "a token [id, kind, bytes, score]")?;
        let id = p.id()?;
        p.expect(b',', "a token [id, kind, bytes, score]")?;
        let kind = p.string()?;
        if !kind.is_ascii() || kind.len() > u16::MAX as usize {
            return Err(CoreError::input(ID_RANGE));
        }
        p.expect(b',', "a token [id, kind, bytes, score]")?;
        let b64 = p.string()?;
        bytes.clear();
        base64(&b64, &mut bytes).map_err(|e| p.err(format!("token {id}: {e}")))?;
        p.expect(b',', "a token [id, kind, bytes, score]")?;
        p.ws();
        let score = if p.s[p.i..].starts_with(b"null") {
            p.i += 4;
            None
        } else {
            let (text, _) = p.number()?;
            let v: f64 = text.parse().map_err(|_| p.err("a score that is not a number"))?;
            if !v.is_finite() {
                return Err(CoreError::input(format!("token {id} has the score inf; scores must be finite numbers")));
            }
            Some(v)
        };
        p.expect(b']', "a token [id, kind, bytes, score]")?;
        if u32::try_from(bytes.len()).is_err() {
            return Err(p.err("a token longer than 4 GB"));
        }
        content::push_record(&mut out, id.into(), &kind, &bytes, score)?;
        n += 1;
        more = p.next_or_end(b']')?;
    }
    Ok((n, out))
}

/// The `merges` array at `data[start..end]`: each [left, right, result] as three u32 LE, and
/// their number.
pub fn merge_triples(data: &[u8], start: usize, end: usize) -> Result<(usize, Vec<u8>), CoreError> {
    let mut p = Json { s: data, i: 0 };
    let mut out = Vec::with_capacity((end - start) / 2);
    let mut n = 0usize;
    let mut more = p.at_array(start, end, "merges")?;
    while more {
        p.expect(b'[', "a merge [left, right, result]")?;
        for k in 0..3 {
            if k > 0 {
                p.expect(b',', "a merge [left, right, result]")?;
            }
            out.extend_from_slice(&p.id()?.to_le_bytes());
        }
        p.expect(b']', "a merge [left, right, result]")?;
        n += 1;
        more = p.next_or_end(b']')?;
    }
    Ok((n, out))
}

/// Standard base64 with its padding, as Python's `b64decode(validate=True)` reads it.
pub(crate) fn base64(s: &str, out: &mut Vec<u8>) -> Result<(), &'static str> {
    let s = s.as_bytes();
    if s.len() % 4 != 0 {
        return Err("its bytes are not base64 (incorrect padding)");
    }
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let quads = s.len() / 4;
    for (q, chunk) in s.chunks_exact(4).enumerate() {
        let pad = if q + 1 == quads { chunk.iter().rev().take_while(|&&c| c == b'=').count() } else { 0 };
        if pad > 2 {
            return Err("its bytes are not base64 (incorrect padding)");
        }
        let mut v = 0u32;
        for &c in &chunk[..4 - pad] {
            v = (v << 6) | val(c).ok_or("its bytes are not base64 (only A-Z a-z 0-9 + / and = padding)")?;
        }
        v <<= 6 * pad as u32;
        out.extend_from_slice(&v.to_be_bytes()[1..4 - pad]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_of_every_padding_and_refusals() {
        let mut out = Vec::new();
        for (s, want) in [("", &b""[..]), ("YQ==", b"a"), ("YWI=", b"ab"), ("YWJj", b"abc"), ("/+8=", b"\xff\xef")] {
            out.clear();
            base64(s, &mut out).unwrap();
            assert_eq!(out, want, "{s}");
        }
        for bad in ["YQ", "Y===", "YQ=a", "Y Q=", "YQ==YQ==", "=AAA"] {
            assert!(base64(bad, &mut out).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_file_split_into_members_and_records() {
        let doc =
            br#" {"a": {"x": [1, "]"]}, "tokens": [[0, "byte", "QQ==", null], [1, "m\u0065rged", "QUI=", -1.5e0]],
            "merges": [[0, 0, 1]]} "#;
        let m = members(doc).unwrap();
        assert_eq!(m.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), ["a", "tokens", "merges"]);
        assert_eq!(&doc[m[0].1..m[0].2], br#"{"x": [1, "]"]}"#);
        let (n, recs) = token_records(doc, m[1].1, m[1].2).unwrap();
        let mut want = vec![0, 0, 0, 0, 4, 0];
        want.extend_from_slice(b"byte\x01\x00\x00\x00A\x00");
        want.extend_from_slice(&[1, 0, 0, 0, 6, 0]);
        want.extend_from_slice(b"merged\x02\x00\x00\x00AB\x01");
        want.extend_from_slice(&(-1.5f64).to_le_bytes());
        assert_eq!((n, recs), (2, want));
        assert_eq!(merge_triples(doc, m[2].1, m[2].2).unwrap(), (1, vec![0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]));
    }

    #[test]
    fn what_is_refused() {
        for bad in [&b"[]"[..], b"{", b"{\"a\":1} x", b"{\"a\" 1}", b"\xff", b"{\"a\":\"\\ud800\"}"] {
            assert!(members(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(70), "]".repeat(70));
        assert!(members(deep.as_bytes()).unwrap_err().to_string().contains("deeper"));
        for (tokens, needle) in [
            (&b"[[4294967296, \"byte\", \"\", null]]"[..], "0..4294967295"),
            (b"[[-1, \"byte\", \"\", null]]", "0..4294967295"),
            (b"[[1.0, \"byte\", \"\", null]]", "not an integer"),
            (b"[[1, \"byte\", \"\", 1e999]]", "finite"),
            (b"[[1, \"byte\", \"\", NaN]]", "number"),
            (b"[[1, \"byt\xc3\xa9\", \"\", null]]", "ASCII"),
            (b"[[1, \"byte\", \"QQ\", null]]", "base64"),
            (b"[[1, \"byte\", \"\"]]", "expected"),
            (b"[[1, \"byte\", \"\", null] [2]]", "expected"),
        ] {
            let e = token_records(tokens, 0, tokens.len()).unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
        assert!(merge_triples(b"[[1, 2]]", 0, 8).is_err());
        assert!(merge_triples(b"[[1, 2, true]]", 0, 14).is_err());
    }
}
