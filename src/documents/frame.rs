//! A frame (a buffer of whole lines, `cut`'s input) cut, encoded and packed in pieces on
//! `threads` threads: the whole of `tokreg tokenize`'s work on a frame, with no serial part
//! but the split and a few bytes per document (ends, bad units) joined.
//!
//! Why pieces: cutting a frame (the JSON scan of every record) on one thread before the
//! encoder's threads start left the other threads idle for that time. The frame is split into
//! pieces of about `PIECE` bytes, each ending just after a unit's end (a line break; for
//! paragraphs a blank line), and each piece is cut and encoded by one task (`encode_frame`);
//! then each piece's ids are packed by one task straight into its own part of the caller's
//! output buffer (`pack_pieces`: no joining copy). A unit never spans two pieces, and `cut`,
//! the encoder (each text alone) and `pack` work unit by unit, so the pieces' outputs joined
//! in order are what one `cut` + `encode_batch` + `pack` of the whole frame gives: the result
//! depends neither on the piece size nor on the thread count (the test below checks it on
//! every split).
//!
//! Example: `"a\nbc\nd"` as lines, pieces of 2 bytes: `"a\n"`, `"bc\n"`, `"d"`; documents
//! "a" (ends at 2), "bc" (5), "d" (6), as from the whole buffer.

use rayon::prelude::*;

use super::{cut, pack, packed_size, Bad, Kind};
use crate::encode::{Draw, Flat, Rule, Tokenizer};
use crate::error::CoreError;
use crate::pool;

/// Bytes of a frame per task: small enough that the last tasks of a 4 MiB frame leave little
/// idle time, large enough that a task's start costs nothing next to its encoding.
pub const PIECE: usize = 64 << 10;

/// A frame, as `cut` takes it.
pub struct Frame<'a> {
    pub buf: &'a [u8],
    pub kind: Kind,
    pub field: &'a str,
    pub limit: usize,
    pub skip: i64,
    pub overrides: &'a [(usize, String)],
}

/// What one piece gives, its positions and line indexes already in the frame's terms: its
/// documents' ids, where each document ends in the frame, the units that are not documents,
/// bytes of document text, and its lines (the frame's lines are the pieces' summed: the
/// caller numbers the next frame's lines from them, without a scan of its own).
#[derive(Debug, Default, PartialEq)]
pub struct Piece {
    pub ids: Flat,
    pub ends: Vec<usize>,
    pub bad: Vec<Bad>,
    pub text_bytes: usize,
    pub lines: usize,
}

/// The pieces of a frame, cut and encoded, in order (see the module docs).
pub fn encode_frame(
    tok: &Tokenizer,
    frame: &Frame,
    rule: &Rule,
    draw: Option<Draw>,
    threads: usize,
) -> Result<Vec<Piece>, CoreError> {
    encode_pieces(tok, frame, rule, draw, threads, PIECE)
}

/// The bytes `pack_pieces` writes: (ids, lengths). `extra`: ids put around each document.
pub fn packed_pieces_size(pieces: &[Piece], extra: usize, itemsize: usize) -> (usize, usize) {
    pieces
        .iter()
        .map(|p| packed_size(std::slice::from_ref(&p.ids), extra, itemsize))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// `pack` of every piece, each by one task into its own part of `ids` and `lengths` (exactly
/// `packed_pieces_size` bytes each).
pub fn pack_pieces(
    pieces: &[Piece],
    packing: (&[u32], &[u32], usize),
    threads: usize,
    mut ids: &mut [u8],
    mut lengths: &mut [u8],
) -> Result<(), CoreError> {
    let (prefix, suffix, itemsize) = packing;
    let mut jobs = Vec::with_capacity(pieces.len());
    for p in pieces {
        let (n, m) = packed_size(std::slice::from_ref(&p.ids), prefix.len() + suffix.len(), itemsize);
        let (mine, rest) = std::mem::take(&mut ids).split_at_mut(n);
        let (mine_l, rest_l) = std::mem::take(&mut lengths).split_at_mut(m);
        (ids, lengths) = (rest, rest_l);
        jobs.push((p, mine, mine_l));
    }
    let one = |(p, ids, lengths): (&Piece, &mut [u8], &mut [u8])| {
        pack(std::slice::from_ref(&p.ids), prefix, suffix, itemsize, ids, lengths)
    };
    if threads == 1 || jobs.len() == 1 {
        jobs.into_iter().for_each(one);
        return Ok(());
    }
    pool::install(threads, || jobs.into_par_iter().for_each(one))
}

fn encode_pieces(
    tok: &Tokenizer,
    frame: &Frame,
    rule: &Rule,
    draw: Option<Draw>,
    threads: usize,
    piece: usize,
) -> Result<Vec<Piece>, CoreError> {
    let starts = split(frame.buf, frame.kind, piece);
    // A piece's first line index is needed up front only to match Python's overrides (rare:
    // a second call for the few records the scanner left to Python); otherwise each piece
    // counts its own lines and the indexes are shifted afterwards.
    let line0s: Option<Vec<usize>> = (!frame.overrides.is_empty()).then(|| {
        let mut n = 0;
        let mut prev = 0;
        starts
            .iter()
            .map(|&s| {
                n += super::count_byte(&frame.buf[prev..s], b'\n');
                prev = s;
                n
            })
            .collect()
    });
    let one = |k: usize| -> (Result<Piece, CoreError>, usize) {
        let (from, to) = (starts[k], starts.get(k + 1).copied().unwrap_or(frame.buf.len()));
        let line0 = line0s.as_ref().map_or(0, |l| l[k]);
        let c = cut(
            &frame.buf[from..to],
            frame.kind,
            frame.field,
            frame.limit,
            frame.skip - from as i64,
            frame.overrides,
            line0,
        );
        let texts = c.texts();
        let parts = match draw {
            Some(d) => tok.encode_batch_drawn(&texts, rule, d, 1),
            None => tok.encode_batch(&texts, rule, 1),
        };
        let piece = parts.map(|mut parts| {
            let ids = if parts.len() == 1 { parts.pop().unwrap_or_default() } else { join(parts) };
            let ends = c.ends.iter().map(|&e| from + e).collect();
            let bad = c.bad.iter().map(|b| Bad { end: from + b.end, line: line0 + b.line, why: b.why }).collect();
            Piece { ids, ends, bad, text_bytes: c.text_bytes, lines: c.lines }
        });
        let lines = c.lines;
        c.recycle();
        (piece, lines)
    };
    let done: Vec<(Result<Piece, CoreError>, usize)> = if threads == 1 || starts.len() == 1 {
        (0..starts.len()).map(one).collect()
    } else {
        pool::install(threads, || (0..starts.len()).into_par_iter().map(one).collect())?
    };
    let mut out = Vec::with_capacity(done.len());
    let (mut lines, mut docs) = (0, 0);
    for (packed, n) in done {
        // The first error in document order, whichever task met it first.
        let mut p = packed.map_err(|e| shifted(e, docs))?;
        if line0s.is_none() {
            p.bad.iter_mut().for_each(|b| b.line += lines);
        }
        lines += n;
        docs += p.ends.len();
        out.push(p);
    }
    Ok(out)
}

/// Flat parts as one (the batch encoder gives one part on one thread; this is for any other).
fn join(parts: Vec<Flat>) -> Flat {
    let mut out = Flat::default();
    for p in parts {
        let base = out.ids.len();
        out.ends.extend(p.ends.iter().map(|e| e + base));
        out.ids.extend(p.ids);
    }
    out
}

/// A piece's error in the frame's terms: a refused text's index counts the documents before.
fn shifted(e: CoreError, docs_before: usize) -> CoreError {
    match e {
        CoreError::Refused { token, index } => CoreError::Refused { token, index: index.map(|i| i + docs_before) },
        e => e,
    }
}

/// Where each piece starts: 0, then just after the first unit's end at or after every
/// `piece` bytes (a line break; `\n\n` for paragraphs, whose blank line closes a paragraph).
fn split(buf: &[u8], kind: Kind, piece: usize) -> Vec<usize> {
    let sep: &[u8] = if kind == Kind::Paragraph { b"\n\n" } else { b"\n" };
    let mut starts = vec![0];
    let mut at = piece.max(1);
    while at < buf.len() {
        let Some(k) = buf[at - 1..].windows(sep.len()).position(|w| w == sep) else { break };
        let next = at - 1 + k + sep.len();
        if next >= buf.len() {
            break;
        }
        starts.push(next);
        at = next + piece.max(1);
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::tiny_byte_level as tok;

    /// (ids, lengths, ends, bad, text bytes, lines) as the binding hands them on.
    type Out = (Vec<u8>, Vec<u8>, Vec<usize>, Vec<Bad>, usize, usize);

    fn packed(pieces: &[Piece], threads: usize) -> Out {
        let (n, m) = packed_pieces_size(pieces, 3, 2);
        let (mut ids, mut lengths) = (vec![0; n], vec![0; m]);
        pack_pieces(pieces, (&[7], &[9, 9], 2), threads, &mut ids, &mut lengths).unwrap();
        let ends = pieces.iter().flat_map(|p| p.ends.clone()).collect();
        let bad = pieces.iter().flat_map(|p| p.bad.clone()).collect();
        let lines = pieces.iter().map(|p| p.lines).sum();
        (ids, lengths, ends, bad, pieces.iter().map(|p| p.text_bytes).sum(), lines)
    }

    fn whole(frame: &Frame, rule: &Rule) -> Out {
        let c = cut(frame.buf, frame.kind, "text", frame.limit, frame.skip, frame.overrides, 0);
        let piece = Piece {
            ids: join(tok().encode_batch(&c.texts(), rule, 1).unwrap()),
            ends: c.ends,
            bad: c.bad,
            text_bytes: c.text_bytes,
            lines: c.lines,
        };
        packed(&[piece], 1)
    }

    #[test]
    fn pieces_joined_equal_the_whole_frame_for_any_piece_size_and_thread_count() {
        let t = tok();
        let rule = Rule::default();
        let over = [(5, "from python".to_string())];
        type Case<'a> = (&'a [u8], Kind, usize, &'a [(usize, String)]);
        let cases: [Case; 5] = [
            (b"ab ab\n\nabab\nx\n\n\nab ab ab ab ab ab\nb\n\n", Kind::Paragraph, 12, &[]),
            (b"ab\nab ab\n\n\xffab\nabababababababab\nab\nb", Kind::Line, 12, &[]),
            (b"a\n\nb\n\nc\n\n\n\nab\nab\nabababababababab\n\n", Kind::Paragraph, 12, &[]),
            (
                b"{\"text\": \"ab\"}\n\n{\"text\": \"\"}\n{\"text\": 1}\n \n{\"text\": \"a\\nb\"}\n{}\n",
                Kind::Record,
                20,
                &over,
            ),
            (b"{\"text\": \"ab\"}\n{\"text\": \"abababababab ab\"}\n{\"text\": \"b\"}", Kind::Record, 20, &[]),
        ];
        for (buf, kind, limit, overrides) in cases {
            let frame = Frame { buf, kind, field: "text", limit, skip: 3, overrides };
            let want = whole(&frame, &rule);
            assert!(want.2.len() > 1 && !want.3.is_empty(), "{kind:?}: a case worth splitting: {want:?}");
            for piece in 1..buf.len() + 2 {
                for threads in [1, 2, 3] {
                    let got = encode_pieces(&t, &frame, &rule, None, threads, piece).unwrap();
                    assert_eq!(packed(&got, threads), want, "{kind:?}, pieces of {piece} bytes, {threads} threads");
                }
            }
        }
    }

    #[test]
    fn pieces_end_just_after_a_unit() {
        assert_eq!(split(b"a\nbc\nd", Kind::Line, 2), [0, 2, 5]);
        assert_eq!(split(b"a\nbc\nd\n", Kind::Line, 1), [0, 2, 5]);
        assert_eq!(split(b"a\n\nb\nc\n\nd", Kind::Paragraph, 1), [0, 3, 8]);
        assert_eq!(split(b"abc", Kind::Line, 1), [0]);
    }

    #[test]
    fn a_refused_text_is_named_by_its_place_in_the_frame() {
        let t = tok();
        let rule = t.rule(Some(&[]), None).unwrap();
        let buf = b"ab\nab\nab\nx<s>\n";
        let frame = Frame { buf, kind: Kind::Line, field: "", limit: 99, skip: -1, overrides: &[] };
        let e = encode_pieces(&t, &frame, &rule, None, 2, 1).unwrap_err();
        assert!(matches!(e, CoreError::Refused { index: Some(3), .. }), "{e:?}");
    }
}
