//! What a tokenizer loses of a text, measured line by line in the core: every line (with its
//! `\n`) encoded on its own with special-token strings taken as ordinary text, decoded back and
//! compared byte for byte, and the ids that are special tokens (the unknown token among them)
//! counted. `tokreg train` measures each trained version on its own corpus this way
//! (`tokreg/training/round_trip.py`), so it must cost little beside training: no Python object
//! per line or id, and the lines spread over the threads.

use rayon::prelude::*;

use super::Tokenizer;
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
}
