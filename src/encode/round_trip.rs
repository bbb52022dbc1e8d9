//! What a tokenizer loses of a text, measured line by line in the core: every line (with its
//! `\n`) encoded on its own with special-token strings taken as ordinary text, decoded back and
//! compared byte for byte, and the ids that are special tokens (the unknown token among them)
//! counted. `tokreg train` measures each trained version on its own corpus this way
//! (`tokreg/training/round_trip.py`), so it must cost little beside training: no Python object
//! per line or id, and the lines spread over the threads.
//!
//! A byte-level BPE encodes a line piece by piece, each piece on its own, so the measure of a
//! corpus also follows from its distinct counted pieces (`round_trip_pieces`): every line comes
//! back iff every piece does, and its tokens are the pieces' tokens times their counts. That
//! costs the distinct pieces, not the whole text (a fifth of it for 20 MB of prose).

use rayon::prelude::*;

use super::Tokenizer;
use crate::bpe::distinct_pass::{run, PieceSegments};
use crate::bpe::{same_bytes, Distinct, Merger, RankEncoder};
use crate::count::{Counts, RunPieces};
use crate::encode::Encode;
use crate::error::CoreError;
use crate::pool;

/// The totals over the lines measured (a line not valid UTF-8 is counted in `bytes` and
/// `skipped`, and not encoded).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundTrip {
    pub lines: u64,
    pub lost_lines: u64,
    pub tokens: u64,
    pub unknown: u64,
    pub bytes: u64,
    pub skipped: u64,
}

impl RoundTrip {
    fn add(mut self, o: RoundTrip) -> RoundTrip {
        self.lines += o.lines;
        self.lost_lines += o.lost_lines;
        self.tokens += o.tokens;
        self.unknown += o.unknown;
        self.bytes += o.bytes;
        self.skipped += o.skipped;
        self
    }
}

/// Lines per parallel task: enough to amortize a task.
const TASK_BYTES: usize = 256 << 10;

/// The lines of `seg`: each ends after its `\n`, the last one may have none.
fn lines(seg: &[u8]) -> impl Iterator<Item = &[u8]> {
    seg.split_inclusive(|&b| b == b'\n')
}

impl Tokenizer {
    /// Measures the lines of every segment (see the module header); `specials` are the ids
    /// counted as unknown. Totals are sums, so the thread count never changes them.
    pub fn round_trip<T>(&self, segments: &[T], specials: &[u32], threads: usize) -> Result<RoundTrip, CoreError>
    where
        T: AsRef<[u8]> + Sync,
    {
        // Tasks of whole lines, about TASK_BYTES each.
        let mut tasks: Vec<&[u8]> = Vec::new();
        for seg in segments {
            let seg = seg.as_ref();
            let mut start = 0;
            while start < seg.len() {
                let want = (start + TASK_BYTES).min(seg.len());
                let end = match seg[want..].iter().position(|&b| b == b'\n') {
                    Some(i) if want < seg.len() => want + i + 1,
                    _ => seg.len(),
                };
                tasks.push(&seg[start..end]);
                start = end;
            }
        }
        let measure = |part: &[u8]| -> Result<RoundTrip, CoreError> {
            let mut rt = RoundTrip::default();
            let mut ids = Vec::new();
            for line in lines(part) {
                rt.bytes += line.len() as u64;
                let Ok(text) = std::str::from_utf8(line) else {
                    rt.skipped += 1;
                    continue;
                };
                ids.clear();
                self.encoder().encode_into(text, &mut ids)?;
                rt.lines += 1;
                rt.tokens += ids.len() as u64;
                rt.unknown += ids.iter().filter(|i| specials.contains(i)).count() as u64;
                if self.decode_bytes(&ids)? != line {
                    rt.lost_lines += 1;
                }
            }
            Ok(rt)
        };
        if threads == 1 || tasks.len() <= 1 {
            return tasks.iter().try_fold(RoundTrip::default(), |acc, part| Ok(acc.add(measure(part)?)));
        }
        pool::install(threads, || {
            tasks.par_iter().map(|part| measure(part)).try_reduce(RoundTrip::default, |a, b| Ok(a.add(b)))
        })?
    }
}

/// Distinct pieces per parallel task.
const TASK_PIECES: usize = 4096;

/// The text of a counted piece or run, as the round trip compares it: its key's bytes, or the
/// buffer the segmenting wrote it into.
enum Text<'a> {
    Key(&'a [u8]),
    Built,
}

impl Tokenizer {
    /// `round_trip` of the whole text `counts` were counted from (every line of it, none
    /// skipped), found from the distinct pieces (or a superword version's runs): each encoded
    /// once as encoding segments it, decoded back and compared; its tokens and unknown ids
    /// weighted by its count. `None` when the pieces cannot stand for the lines, and the
    /// caller measures the lines: an encoder that does not encode piece by piece, counts that
    /// lost text (pieces dropped by the budget, long lines cut, a pattern leaving gaps, so the
    /// pieces do not add up to the bytes read), a piece that is not UTF-8 (its line would be
    /// skipped), or a piece that does not come back (which lines lose it, the lines tell).
    ///
    /// Every piece is new, so a byte-level encoder merges them by its rule without its thread
    /// cache (`bpe::distinct_pass`); a superword encoder's runs are new but their pieces are
    /// not, so stage 1 keeps its cache, held for a task rather than taken for each run. Totals
    /// are sums over tasks, so the thread count never changes them.
    pub fn round_trip_pieces(
        &self,
        counts: &Counts,
        specials: &[u32],
        threads: usize,
    ) -> Result<Option<RoundTrip>, CoreError> {
        self.round_trip_keys(counts, specials, threads, true)
    }

    /// `round_trip_pieces`, or with every key segmented by `Encode::segment_counted` when not
    /// `uncached` (what the pass is tested against).
    pub fn round_trip_keys<'a>(
        &'a self,
        counts: &'a Counts,
        specials: &[u32],
        threads: usize,
        uncached: bool,
    ) -> Result<Option<RoundTrip>, CoreError> {
        let stats = &counts.stats;
        if stats.dropped_pieces > 0 || stats.cut_lines > 0 {
            return Ok(None);
        }
        // (tokens, unknown, bytes) of pieces a..b; None at the first piece that cannot stand
        // for its lines.
        type Sums = Option<(u64, u64, u64)>;
        let enc = self.encoder();
        let concatenates = enc.concatenates();
        // Segments key `i` into the ids it encodes to and returns its text (or writes it into
        // the buffer it is given: the runs' text from their pieces, so that counts whose keys
        // are written on demand never write them).
        type Segment<'s, 'a> = &'s mut dyn FnMut(usize, &mut Vec<u32>, &mut Vec<u8>) -> Result<Text<'a>, CoreError>;
        // `full`: the byte-level encoder whose tokens the ids are, read without a dynamic call.
        let measure =
            |seg: Segment<'_, 'a>, full: Option<&RankEncoder>, a: usize, b: usize| -> Result<Sums, CoreError> {
                let (mut tokens, mut unknown, mut bytes) = (0u64, 0u64, 0u64);
                let (mut ids, mut built) = (Vec::new(), Vec::new());
                for i in a..b {
                    let n = counts.count(i);
                    ids.clear();
                    let piece = match seg(i, &mut ids, &mut built) {
                        Ok(Text::Key(text)) => text,
                        Ok(Text::Built) => &built[..],
                        Err(CoreError::Unsupported { .. }) => return Ok(None),
                        Err(e) => return Err(e),
                    };
                    if std::str::from_utf8(piece).is_err() {
                        return Ok(None);
                    }
                    if !self.decodes_to(&ids, piece, concatenates, full)? {
                        return Ok(None);
                    }
                    tokens += n * ids.len() as u64;
                    unknown += n * ids.iter().filter(|i| specials.contains(i)).count() as u64;
                    bytes += n * piece.len() as u64;
                }
                Ok(Some((tokens, unknown, bytes)))
            };
        let join = |x: Sums, y: Sums| Some((x?.0 + y?.0, x?.1 + y?.1, x?.2 + y?.2));
        let starts: Vec<usize> = (0..counts.len()).step_by(TASK_PIECES).collect();
        // A superword version over counts that hold their runs as piece ids (the run
        // counter's): each distinct piece segmented by stage 1 once, and each run's ids put
        // together from its pieces' (`PieceSegments`), not looked up by bytes run by run.
        let aside = match (enc.distinct(), counts.run_pieces()) {
            (Some(Distinct::Runs(stage1, _, _)), Some(rp)) if uncached => Some((rp, stage1)),
            _ => None,
        };
        let segmented = |(rp, stage1): (&'a RunPieces, &RankEncoder)| {
            (rp, PieceSegments::new(stage1, rp.pieces(), |p| rp.piece(p)))
        };
        let segmented = match aside {
            None => None,
            Some(a) if threads == 1 => Some(segmented(a)),
            Some(a) => Some(pool::install(threads, || segmented(a))?),
        };
        let task = |&a: &usize| {
            let b = (a + TASK_PIECES).min(counts.len());
            match enc.distinct() {
                Some(Distinct::Runs(_, stage2, full)) if segmented.is_some() => {
                    let Some((rp, seg)) = &segmented else { unreachable!() };
                    measure(
                        &mut |i, out, text| {
                            seg.run(rp, i, stage2, out);
                            text.clear();
                            // (byte by byte: most pieces are a few bytes, where a call to
                            // memcpy each costs more than the copy)
                            for &p in rp.run(i) {
                                text.extend(rp.piece(p).iter().copied());
                            }
                            Ok(Text::Built)
                        },
                        Some(full),
                        a,
                        b,
                    )
                }
                Some(Distinct::Pieces(e)) if uncached => {
                    let mut merger = Merger::new(e);
                    measure(
                        &mut |i, out, _| {
                            let key = counts.piece(i);
                            merger.piece(key, out);
                            Ok(Text::Key(key))
                        },
                        Some(e),
                        a,
                        b,
                    )
                }
                Some(Distinct::Runs(stage1, stage2, full)) if uncached => stage1.with_pieces(|piece| {
                    measure(&mut |i, out, _| run(piece, stage2, counts.piece(i), out).map(Text::Key), Some(full), a, b)
                }),
                _ => measure(&mut |i, out, _| enc.segment_counted(counts.piece(i), out).map(Text::Key), None, a, b),
            }
        };
        let sums = if threads == 1 || starts.len() <= 1 {
            starts.iter().map(task).try_fold(Some((0, 0, 0)), |acc, s| Ok::<_, CoreError>(join(acc, s?)))?
        } else {
            pool::install(threads, || {
                starts.par_iter().map(task).try_reduce(|| Some((0, 0, 0)), |x, y| Ok(join(x, y)))
            })??
        };
        Ok(match sums {
            Some((tokens, unknown, bytes)) if bytes == stats.input_bytes => {
                Some(RoundTrip { lines: stats.lines, lost_lines: 0, tokens, unknown, bytes, skipped: 0 })
            }
            _ => None,
        })
    }
}

impl Tokenizer {
    /// Whether `ids` decode to `want`: compared token by token, without making the decoded
    /// bytes, when decoding only concatenates the tokens' bytes (`Encode::concatenates`); an
    /// id without bytes fails as `decode_bytes` fails on it.
    /// `full`: the encoder `token_bytes` is asked of, when it is a byte-level one.
    fn decodes_to(
        &self,
        ids: &[u32],
        want: &[u8],
        concatenates: bool,
        full: Option<&RankEncoder>,
    ) -> Result<bool, CoreError> {
        if !concatenates {
            return Ok(self.decode_bytes(ids)? == want);
        }
        let mut rest = want;
        for &id in ids {
            // An id without bytes, or a token that differs (rare): decoded whole, as before.
            let token = match full {
                Some(f) => f.token_bytes(id),
                None => self.encoder().token_bytes(id),
            };
            match token {
                Some(t) if rest.len() >= t.len() && same_bytes(&rest[..t.len()], t) => rest = &rest[t.len()..],
                _ => return Ok(self.decode_bytes(ids)? == want),
            }
        }
        Ok(rest.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::tiny_byte_level as tok;

    #[test]
    fn totals_match_line_by_line_for_any_thread_count() {
        let t = tok();
        let text: Vec<u8> = (0..3000).flat_map(|i| ["ab ab\n", "\n", "x<s>ab\n", "abab ab"][i % 4].bytes()).collect();
        let mut bad = b"ab\n\xff\xfe\nab".to_vec();
        bad.extend_from_slice(&text);
        let segments = [text.clone(), Vec::new(), bad];
        let mut want = RoundTrip::default();
        for seg in &segments {
            for line in lines(seg) {
                want.bytes += line.len() as u64;
                match std::str::from_utf8(line) {
                    Err(_) => want.skipped += 1,
                    Ok(s) => {
                        let ids = t.encode_ordinary(s).unwrap();
                        want.lines += 1;
                        want.tokens += ids.len() as u64;
                        want.lost_lines += u64::from(t.decode_bytes(&ids).unwrap() != line);
                    }
                }
            }
        }
        assert_eq!(want.skipped, 1);
        for threads in [0, 1, 2, 3] {
            assert_eq!(t.round_trip(&segments, &[], threads).unwrap(), want, "threads {threads}");
        }
        let some = t.encode_ordinary("ab").unwrap()[0];
        assert!(t.round_trip(&segments, &[some], 2).unwrap().unknown > 0);
    }

    #[test]
    fn the_pieces_give_the_lines_totals_or_nothing() {
        use crate::count::{count_inputs, Splitting};
        use crate::pretok::{Splitter, GPT2};

        let t = tok();
        let count = |inputs: &[&[u8]]| count_inputs(inputs, Splitting::Pieces(Splitter::new(GPT2).unwrap())).unwrap();
        let text: Vec<u8> =
            (0..3000).flat_map(|i| ["ab ab\n", "\n", "x<s>ab  \r\n", "abab\tab", "  ab\n"][i % 5].bytes()).collect();
        let inputs: [&[u8]; 3] = [&text, b"", b"ab ab"];
        let lines = t.round_trip(&inputs, &[300], 1).unwrap();
        for threads in [0, 1, 2] {
            let pieces = t.round_trip_pieces(&count(&inputs), &[300], threads).unwrap();
            assert_eq!(pieces, Some(lines), "threads {threads}");
        }
        // A line that is not UTF-8 is skipped by the lines' measure: the pieces cannot say which.
        assert_eq!(t.round_trip_pieces(&count(&[b"ab\xff ab\n"]), &[], 1).unwrap(), None);
        // Counts that lost text (here: none read) cannot stand for it.
        let mut lost = count(&inputs);
        lost.stats.input_bytes += 1;
        assert_eq!(t.round_trip_pieces(&lost, &[], 1).unwrap(), None);
    }
}
