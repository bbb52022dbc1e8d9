//! The one reader of tokreg's canonical content serialization (`tokreg-content-v1`, specified
//! and written by tokreg/content.py, which calls this reader through the binding): the same
//! bytes the content hash is computed over. Loading an encoder from them needs no Python object
//! per token, and checking their hash proves they are the stored version.
//!
//! The token records themselves are written here too (`push_record`): by content.py's
//! `serialize`, through the binding, and by the reader of tokreg files.

use crate::error::CoreError;

/// What a record cannot hold, said once for every writer.
pub const RECORD_RANGE: &str = "a token or merge cannot be stored: ids must be 0..4294967295 and kinds ASCII";

/// Appends one token record: id (u32 LE), the kind's length (u16 LE) and bytes (ASCII), the
/// token's length (u32 LE) and bytes, then `\x00` (no score) or `\x01` and the score (f64 LE).
/// Refused: an id past u32, a kind that is not ASCII or longer than 65,535 bytes, a token of
/// 4 GB or more, a score that is not a finite number.
pub fn push_record(out: &mut Vec<u8>, id: i64, kind: &str, bytes: &[u8], score: Option<f64>) -> Result<(), CoreError> {
    let id = u32::try_from(id).map_err(|_| CoreError::input(RECORD_RANGE))?;
    let klen =
        u16::try_from(kind.len()).ok().filter(|_| kind.is_ascii()).ok_or_else(|| CoreError::input(RECORD_RANGE))?;
    let len = u32::try_from(bytes.len()).map_err(|_| CoreError::input(RECORD_RANGE))?;
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&klen.to_le_bytes());
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(bytes);
    match score {
        None => out.push(0),
        Some(v) if v.is_finite() => {
            out.push(1);
            out.extend_from_slice(&v.to_le_bytes());
        }
        // Python's spelling of the value, as the message has always given it.
        Some(v) => {
            let shown = if v.is_nan() {
                "nan"
            } else if v > 0.0 {
                "inf"
            } else {
                "-inf"
            };
            return Err(CoreError::input(format!("token {id} has the score {shown}; scores must be finite numbers")));
        }
    }
    Ok(())
}

/// Content that does not parse: made by hand, or by a bug (stored content is hash-checked).
fn damaged(what: impl std::fmt::Display) -> CoreError {
    CoreError::input(format!("the tokenizer content is damaged ({what}); rebuild it from the registry"))
}

/// One token record, borrowing its kind and bytes from the content: parsing allocates nothing
/// per token. (Parsed into owned strings, cl100k's 100k tokens left 200k small blocks for
/// glibc's allocator to sort into its bins once freed, and the encoder's first large
/// allocation paid for that: the first call on a freshly loaded encoder, after another one
/// was dropped, took 3.9 ms on 1 MB of one letter instead of 1.3 ms.)
pub struct TokenRec<'a> {
    pub id: u32,
    pub kind: &'a str,
    pub bytes: &'a [u8],
    pub score: Option<f64>,
}

pub struct Content<'a> {
    /// The JSON line: {"algorithm": ..., "config": ...}
    pub header: &'a str,
    pub tokens: Vec<TokenRec<'a>>,
    pub merges: Vec<(u32, u32, u32)>,
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CoreError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len()).ok_or_else(|| damaged("truncated"))?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn line(&mut self) -> Result<&'a str, CoreError> {
        let rest = &self.data[self.pos..];
        let n = rest.iter().position(|&b| b == b'\n').ok_or_else(|| damaged("truncated: a line is missing"))?;
        let s = std::str::from_utf8(&rest[..n]).map_err(|_| damaged("a header line is not UTF-8"))?;
        self.pos += n + 1;
        Ok(s)
    }
    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
    fn u16(&mut self) -> Result<u16, CoreError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, CoreError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn count(&mut self, label: &str) -> Result<usize, CoreError> {
        let l = self.line()?;
        l.strip_prefix(label)
            .and_then(|n| n.strip_prefix(' '))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| damaged(format!("expected '{label} N', found {l:?}")))
    }
}

/// The magic line, checked, and the JSON line; the reader is left at the body.
fn head<'a>(r: &mut Reader<'a>) -> Result<&'a str, CoreError> {
    let magic = r.line()?;
    if magic != "tokreg-content-v1" {
        return Err(CoreError::input(format!(
            "unknown tokenizer content format {magic:?}; this version of tokreg reads tokreg-content-v1"
        )));
    }
    r.line()
}

/// The JSON line (`{"algorithm": ..., "config": ...}`) alone, without reading the body: a
/// content is megabytes, its header a few hundred bytes.
pub fn header(data: &[u8]) -> Result<&str, CoreError> {
    head(&mut Reader { data, pos: 0 })
}

pub fn parse(data: &[u8]) -> Result<Content<'_>, CoreError> {
    let mut r = Reader { data, pos: 0 };
    let header = head(&mut r)?;
    let n = r.count("tokens")?;
    // Room for what the bytes can hold (a token record is at least 11 bytes), not for what the
    // count line claims: "tokens 99999999999" must be "truncated", not an allocation failure.
    let mut tokens = Vec::with_capacity(n.min(r.remaining() / 11));
    for _ in 0..n {
        let id = r.u32()?;
        let klen = r.u16()? as usize;
        let kind = std::str::from_utf8(r.take(klen)?).map_err(|_| damaged("a token kind is not ASCII"))?;
        let blen = r.u32()? as usize;
        let bytes = r.take(blen)?;
        let score = match r.take(1)?[0] {
            0 => None,
            1 => Some(f64::from_le_bytes(r.take(8)?.try_into().unwrap())),
            f => return Err(damaged(format!("bad score flag {f}"))),
        };
        tokens.push(TokenRec { id, kind, bytes, score });
    }
    let m = r.count("merges")?;
    let mut merges = Vec::with_capacity(m.min(r.remaining() / 12));
    for _ in 0..m {
        merges.push((r.u32()?, r.u32()?, r.u32()?));
    }
    if r.pos != data.len() {
        return Err(damaged("trailing bytes"));
    }
    Ok(Content { header, tokens, merges })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_larger_than_the_bytes_are_truncated_content_not_an_allocation() {
        for counts in ["tokens 99999999999999\n", "tokens 0\nmerges 18446744073709551615\n"] {
            let data = format!("tokreg-content-v1\n{{}}\n{counts}");
            let e = parse(data.as_bytes()).err().expect("refused");
            assert!(e.to_string().contains("truncated"), "{e}");
        }
        assert!(parse(b"tokreg-content-v1\n{}\ntokens 0\nmerges 0\n").is_ok());
        assert_eq!(header(b"tokreg-content-v1\n{\"a\":1}\ntokens 5\n...").unwrap(), "{\"a\":1}");
        assert!(header(b"tokreg-content-v2\n{}\n").unwrap_err().to_string().contains("unknown"));
    }
}
