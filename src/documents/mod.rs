//! Documents cut from a buffer of whole lines, and encoded in the same call: the hot path of
//! `tokreg tokenize` (tokreg/datasets/documents.py frames an input into such buffers).
//!
//! A buffer holds whole units of its kind (the caller cuts it after a line break, or after a
//! blank line for paragraphs), except the last buffer of an input, whose final line may lack
//! its break. The kinds, as tokreg/datasets/options.py documents them:
//!
//! - `Line`: each non-empty line, without its `\n`; it ends just after its `\n`;
//! - `Paragraph`: runs of non-empty lines joined by `\n`, ending just after the blank line
//!   that closes them (at the buffer's end for the last one);
//! - `Record`: the string field of each JSON Lines record (json.rs), lines that are blank
//!   after stripping ASCII whitespace (Python's `bytes.strip`) skipped.
//!
//! A unit that cannot be a document is a `Bad` (with its line index in the buffer and where it
//! ends), never silently dropped: over `limit` bytes, not UTF-8, an empty record field, or
//! (`Why::Python`) a record the fast JSON scanner leaves to Python's parser, which judges it and
//! may hand its text back through `overrides`. Units ending at or before `skip` are dropped
//! (they are in a resumed run's complete shards).

mod frame;
pub mod json;

use std::cell::RefCell;

pub use frame::{encode_frame, pack_pieces, packed_pieces_size, Frame, Piece};

use json::Found;

/// What kind of document a buffer is cut into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Line,
    Paragraph,
    Record,
}

impl Kind {
    pub fn from_name(name: &str) -> Option<Kind> {
        Some(match name {
            "line" => Kind::Line,
            "paragraph" => Kind::Paragraph,
            "record" => Kind::Record,
            _ => return None,
        })
    }
}

/// Why a unit is not a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// over the limit: the unit's size in bytes
    Over(usize),
    /// a paragraph holding a line over the limit
    LineOver,
    /// not UTF-8: the first bad byte's offset in the document
    NotUtf8(usize),
    /// a record whose field is the empty string
    Empty,
    /// a record for Python's JSON parser to judge
    Python,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bad {
    /// where the unit ends in the buffer
    pub end: usize,
    /// the index in the buffer of its (first) line
    pub line: usize,
    pub why: Why,
}

/// A document's text: a slice of the buffer (or of a text Python's parser gave), or of the
/// cut's arena (a JSON record's field with escapes, unescaped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Text<'a> {
    Borrowed(&'a str),
    Arena(usize, usize),
}

/// The documents of a buffer, in order: text `k` (`texts()`) ends at `ends[k]` in the buffer.
#[derive(Debug, Default)]
pub struct Cut<'a> {
    pub spans: Vec<Text<'a>>,
    /// the unescaped texts of JSON records, one after another (one buffer per cut)
    pub arena: String,
    pub ends: Vec<usize>,
    pub bad: Vec<Bad>,
    /// bytes of document text
    pub text_bytes: usize,
    /// lines in the buffer (the last one counted whether or not it ends in a line break)
    pub lines: usize,
}

thread_local! {
    /// `cut`'s working space, kept by each thread from piece to piece instead of taken fresh
    /// (and touched fresh) for each: the scratch a JSON string is unescaped into, and an arena
    /// (a `Cut` takes it, `recycle` gives it back).
    static SPACE: RefCell<(Vec<u8>, String)> = RefCell::new(Default::default());
}

/// Working space larger than this (a piece holding a huge document) is not kept.
const KEEP: usize = 1 << 20;

impl<'a> Cut<'a> {
    /// Gives the arena back to this thread's working space, for its next cut.
    pub fn recycle(mut self) {
        if self.arena.capacity() <= KEEP {
            self.arena.clear();
            SPACE.with(|s| s.borrow_mut().1 = self.arena);
        }
    }

    /// The documents' texts, in order.
    pub fn texts(&self) -> Vec<&str> {
        let text = |t: &Text<'a>| match *t {
            Text::Borrowed(s) => s,
            Text::Arena(a, b) => &self.arena[a..b],
        };
        self.spans.iter().map(text).collect()
    }

    fn bad(&mut self, skip: i64, end: usize, line: usize, why: Why) {
        if end as i64 > skip {
            self.bad.push(Bad { end, line, why });
        }
    }

    /// A document `raw`, with its text when the caller knows it is valid UTF-8.
    fn doc(&mut self, skip: i64, end: usize, line: usize, raw: &'a [u8], text: Option<&'a str>, limit: usize) {
        if end as i64 <= skip {
            return;
        }
        if raw.len() > limit {
            return self.bad(skip, end, line, Why::Over(raw.len()));
        }
        if let Some(t) = text {
            return self.text(end, Text::Borrowed(t));
        }
        match std::str::from_utf8(raw) {
            Ok(t) => self.text(end, Text::Borrowed(t)),
            Err(e) => self.bad(skip, end, line, Why::NotUtf8(e.valid_up_to())),
        }
    }

    fn text(&mut self, end: usize, text: Text<'a>) {
        self.text_bytes += match text {
            Text::Borrowed(s) => s.len(),
            Text::Arena(a, b) => b - a,
        };
        self.spans.push(text);
        self.ends.push(end);
    }
}

/// Python's `bytes.strip()` whitespace.
fn blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c'))
}

/// Cuts `buf` (see the module docstring). `overrides`: (line index, text) of records whose text
/// Python's parser gave, taken as they are; their line indexes count from `line0` (the line
/// index `buf` starts at in the frame it was taken from: frame.rs cuts a frame in pieces).
pub fn cut<'a>(
    buf: &'a [u8],
    kind: Kind,
    field: &str,
    limit: usize,
    skip: i64,
    overrides: &'a [(usize, String)],
    line0: usize,
) -> Cut<'a> {
    let mut out = Cut::default();
    // A JSON string unescaped (json.rs), reused from record to record; the arena sized once for
    // the most text the records can give (unescaping never lengthens), not grown by doubling
    // (each growth a copy of all the text so far).
    let (mut scratch, arena) = SPACE.with(|s| std::mem::take(&mut *s.borrow_mut()));
    out.arena = arena;
    if kind == Kind::Record {
        out.arena.reserve(buf.len());
    }
    // Valid UTF-8 throughout (the usual case): each line's text is a slice of it, not validated
    // again line by line.
    let text = if kind == Kind::Record { None } else { std::str::from_utf8(buf).ok() };
    let mut para: Option<(usize, usize, bool)> = None; // (start, first line, holds a line over)
    let mut start = 0;
    let mut line = 0;
    // Records are scanned from their start, the line's end found by the scan itself (json.rs
    // `record`); a line the scan does not take whole, and every line on a second call (with
    // Python's texts), goes the general way below.
    let scan = kind == Kind::Record && overrides.is_empty();
    while start < buf.len() {
        if scan {
            let mark = out.arena.len();
            if let Some((found, stop)) = json::record(buf, start, field, &mut scratch, &mut out.arena) {
                let end = if stop < buf.len() { stop + 1 } else { stop };
                if stop - start > limit {
                    out.arena.truncate(mark);
                    out.bad(skip, end, line, Why::Over(stop - start));
                } else if end as i64 <= skip {
                    out.arena.truncate(mark);
                } else {
                    match found {
                        Found::Line("") => out.bad(skip, end, line, Why::Empty),
                        Found::Arena(a, b) if a == b => out.bad(skip, end, line, Why::Empty),
                        Found::Line(t) => out.text(end, Text::Borrowed(t)),
                        Found::Arena(a, b) => out.text(end, Text::Arena(a, b)),
                    }
                }
                start = end;
                line += 1;
                continue;
            }
        }
        let (stop, end) = match memchr::memchr(b'\n', &buf[start..]) {
            Some(k) => (start + k, start + k + 1),
            None => (buf.len(), buf.len()),
        };
        let raw = &buf[start..stop];
        match kind {
            Kind::Line if raw.is_empty() => {}
            Kind::Line => out.doc(skip, end, line, raw, text.map(|t| &t[start..stop]), limit),
            Kind::Paragraph if raw.is_empty() => {
                if let Some((from, first, over)) = para.take() {
                    let t = text.map(|t| &t[from..start - 1]);
                    paragraph(&mut out, skip, end, first, over, &buf[from..start - 1], t, limit);
                }
            }
            Kind::Paragraph => {
                let p = para.get_or_insert((start, line, false));
                p.2 |= raw.len() > limit;
            }
            Kind::Record if blank(raw) => {}
            Kind::Record if raw.len() > limit => out.bad(skip, end, line, Why::Over(raw.len())),
            Kind::Record if end as i64 <= skip => {}
            Kind::Record => match overrides.iter().find(|(l, _)| *l == line0 + line) {
                Some((_, text)) if text.is_empty() => out.bad(skip, end, line, Why::Empty),
                Some((_, text)) => out.text(end, Text::Borrowed(text)),
                None => match json::field_into(raw, field, &mut scratch, &mut out.arena) {
                    Some(Found::Line("")) => out.bad(skip, end, line, Why::Empty),
                    Some(Found::Arena(a, b)) if a == b => out.bad(skip, end, line, Why::Empty),
                    Some(Found::Line(t)) => out.text(end, Text::Borrowed(t)),
                    Some(Found::Arena(a, b)) => out.text(end, Text::Arena(a, b)),
                    None => out.bad(skip, end, line, Why::Python),
                },
            },
        }
        start = end;
        line += 1;
    }
    if let Some((from, first, over)) = para {
        let upto = if buf.ends_with(b"\n") { buf.len() - 1 } else { buf.len() };
        let t = text.map(|t| &t[from..upto]);
        paragraph(&mut out, skip, buf.len(), first, over, &buf[from..upto], t, limit);
    }
    out.lines = line;
    if scratch.capacity() <= KEEP {
        SPACE.with(|s| s.borrow_mut().0 = scratch);
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn paragraph<'a>(
    out: &mut Cut<'a>,
    skip: i64,
    end: usize,
    first: usize,
    over: bool,
    raw: &'a [u8],
    text: Option<&'a str>,
    limit: usize,
) {
    if over {
        out.bad(skip, end, first, Why::LineOver);
    } else {
        out.doc(skip, end, first, raw, text, limit);
    }
}

/// The ids of encoded documents as a dataset stores them, written into `ids` and `lengths`
/// (exactly `packed_size` bytes each): each document's ids between `prefix` and `suffix`, every
/// id little-endian in `itemsize` bytes (2 or 4; the caller chose a width that holds every id),
/// and the number of ids of each document (little-endian i64).
pub fn pack(
    parts: &[crate::encode::Flat],
    prefix: &[u32],
    suffix: &[u32],
    itemsize: usize,
    ids: &mut [u8],
    lengths: &mut [u8],
) {
    let put = |out: &mut [u8], s: &[u32]| -> usize {
        let n = s.len() * itemsize;
        if itemsize == 2 {
            out[..n].chunks_exact_mut(2).zip(s).for_each(|(o, &i)| o.copy_from_slice(&(i as u16).to_le_bytes()));
        } else {
            out[..n].chunks_exact_mut(4).zip(s).for_each(|(o, &i)| o.copy_from_slice(&i.to_le_bytes()));
        }
        n
    };
    let (mut at, mut doc) = (0, 0);
    for part in parts {
        for text in part.texts() {
            at += put(&mut ids[at..], prefix);
            at += put(&mut ids[at..], text);
            at += put(&mut ids[at..], suffix);
            let n = (prefix.len() + text.len() + suffix.len()) as i64;
            lengths[doc * 8..doc * 8 + 8].copy_from_slice(&n.to_le_bytes());
            doc += 1;
        }
    }
}

/// The bytes `pack` writes for `parts`: (ids, lengths). `extra`: ids put around each document.
pub fn packed_size(parts: &[crate::encode::Flat], extra: usize, itemsize: usize) -> (usize, usize) {
    let docs: usize = parts.iter().map(|p| p.ends.len()).sum();
    let ids: usize = parts.iter().map(|p| p.ids.len()).sum::<usize>() + docs * extra;
    (ids * itemsize, docs * 8)
}

/// How many times `b` occurs in `s` (memchr's SIMD search: 3x a plain `filter().count()` even
/// with a line break every 30 bytes).
pub fn count_byte(s: &[u8], b: u8) -> usize {
    memchr::memchr_iter(b, s).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(buf: &str, kind: Kind, limit: usize, skip: i64) -> (Vec<(String, usize)>, Vec<Bad>) {
        let c = cut(buf.as_bytes(), kind, "text", limit, skip, &[], 0);
        (c.texts().iter().map(|t| t.to_string()).zip(c.ends.clone()).collect(), c.bad)
    }

    fn texts(v: &[(&str, usize)]) -> Vec<(String, usize)> {
        v.iter().map(|(t, e)| (t.to_string(), *e)).collect()
    }

    #[test]
    fn lines_paragraphs_and_records_end_where_the_docstring_says() {
        let text = "a\n\nbc\nd\n\n\ne";
        assert_eq!(docs(text, Kind::Line, 99, -1).0, texts(&[("a", 2), ("bc", 6), ("d", 8), ("e", 11)]));
        assert_eq!(docs(text, Kind::Paragraph, 99, -1).0, texts(&[("a", 3), ("bc\nd", 9), ("e", 11)]));
        assert_eq!(docs("a\nb\n", Kind::Paragraph, 99, -1).0, texts(&[("a\nb", 4)]));
        assert_eq!(docs(text, Kind::Line, 99, 6).0, texts(&[("d", 8), ("e", 11)]));
        let jl = "{\"text\": \"x\\ny\"}\n \t\n{\"text\": \"\"}\n{\"text\": 1}\n{\"text\": \"z\"}";
        let (d, bad) = docs(jl, Kind::Record, 99, -1);
        assert_eq!(d, texts(&[("x\ny", 17), ("z", 58)]));
        assert_eq!(bad.iter().map(|b| (b.line, b.why)).collect::<Vec<_>>(), [(2, Why::Empty), (3, Why::Python)]);
        let over = [(3, "one".to_string())];
        let c = cut(jl.as_bytes(), Kind::Record, "text", 99, -1, &over, 0);
        assert_eq!(c.texts(), ["x\ny", "one", "z"]);
    }

    #[test]
    fn records_scanned_whole_equal_records_cut_at_their_line_breaks() {
        // a second call's override (here for no line) sends every line the general way
        let general = [(usize::MAX, String::new())];
        let cases: [&[u8]; 3] = [
            b"{\"text\": \"a\\nb\"}\n{\"text\":\"caf\xc3\xa9\"}\r\n \n{\"text\": \"\"}\n{\"text\": 1}\n{\"text\": \"x\"} y\n",
            b"{\"text\":\"bad \xff\"}\n{\"a\":\n\"b\", \"text\": \"c\"}\n{\"text\": \"\\u00e9\\t\"}\n\n{\"text\": \"no break\"}",
            b"{\"text\": \"one\", \"text\": \"tw\\u006f\"}\n{\"text\":\"\xe9t\xc3\xa9\"}\n{\"text\":\"\\\"q\\\"\"}\r\n",
        ];
        for buf in cases {
            for limit in [4, 14, 99] {
                for skip in [-1, 17, 40] {
                    let a = cut(buf, Kind::Record, "text", limit, skip, &[], 0);
                    let b = cut(buf, Kind::Record, "text", limit, skip, &general, 0);
                    let key = |c: &Cut| (c.texts().join("|"), c.ends.clone(), c.bad.clone(), c.text_bytes, c.lines);
                    assert_eq!(key(&a), key(&b), "{:?}, limit {limit}, skip {skip}", String::from_utf8_lossy(buf));
                }
            }
        }
        let c = cut(cases[0], Kind::Record, "text", 99, -1, &[], 0);
        assert_eq!(c.texts(), ["a\nb", "caf\u{e9}"]);
        assert_eq!(
            c.bad.iter().map(|b| (b.line, b.why)).collect::<Vec<_>>(),
            [(3, Why::Empty), (4, Why::Python), (5, Why::Python)]
        );
    }

    #[test]
    fn units_over_the_limit_or_not_utf8_are_bad() {
        let (d, bad) = docs("ab\n\nabcd\nx\n\nab\nde", Kind::Paragraph, 3, -1);
        assert_eq!(d, texts(&[("ab", 4)]));
        assert_eq!(bad, [Bad { end: 12, line: 2, why: Why::LineOver }, Bad { end: 17, line: 5, why: Why::Over(5) }]);
        let c = cut(b"ok\nno\xff\n", Kind::Line, "", 9, -1, &[], 0);
        assert_eq!(c.bad, [Bad { end: 7, line: 1, why: Why::NotUtf8(2) }]);
        assert_eq!(count_byte(b"a\nb\n", b'\n'), 2);
        let long: Vec<u8> = (0..100_000u32).map(|i| if i % 3 == 0 { b'\n' } else { b'x' }).collect();
        assert_eq!(count_byte(&long, b'\n'), 33_334);
    }

    #[test]
    fn packed_ids_carry_the_documents_ends() {
        use crate::encode::Flat;
        let parts = [Flat { ids: vec![1, 2, 3], ends: vec![2, 3] }, Flat { ids: vec![258], ends: vec![0, 1] }];
        let packed = |prefix: &[u32], suffix: &[u32], itemsize| {
            let (n, m) = packed_size(&parts, prefix.len() + suffix.len(), itemsize);
            let (mut ids, mut lengths) = (vec![0; n], vec![0; m]);
            pack(&parts, prefix, suffix, itemsize, &mut ids, &mut lengths);
            (ids, lengths)
        };
        let (ids, lengths) = packed(&[7], &[], 2);
        let ids: Vec<u16> = ids.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        assert_eq!(ids, [7, 1, 2, 7, 3, 7, 7, 258]);
        let lengths: Vec<i64> = lengths.chunks(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(lengths, [3, 2, 1, 2]);
        let (ids, _) = packed(&[], &[9], 4);
        let ids: Vec<u32> = ids.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(ids, [1, 2, 9, 3, 9, 9, 258, 9]);
    }
}
