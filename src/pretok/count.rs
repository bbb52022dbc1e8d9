//! Counting distinct pieces of a corpus, in parallel and independent of thread count.
//!
//! The corpus is cut into lines (each keeping its `\n`) and every line is pre-tokenized on its
//! own, as Hugging Face's trainers do with files. So the counts are a function of the multiset
//! of lines: neither the order of lines or files nor the thread count can change them.
//! Bytes that are not valid UTF-8 become one-byte pieces of their own (byte-level BPE accepts
//! any input; the regex only ever sees valid text).

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::Splitter;
use crate::error::CoreError;

/// piece bytes -> number of occurrences
pub type PieceCounts = FxHashMap<Vec<u8>, u64>;

const CHUNK: usize = 1 << 20;

/// Counts the pieces of every input. `progress(done_bytes, total_bytes)` is called from the
/// calling thread between batches; returning `false` stops early with `CoreError::Interrupted`.
pub fn count_pieces(
    inputs: &[&[u8]],
    splitter: &Splitter,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<PieceCounts, CoreError> {
    count_chunks(inputs, progress, |c| count_chunk(c, splitter))
}

/// Counts words for trainers that normalize and split text themselves (WordPiece, Unigram):
/// `split(line, emit)` calls `emit` with each word of one line. Bytes that are not UTF-8 are
/// replaced by U+FFFD (these trainers take text; the caller checks UTF-8 first).
pub fn count_words<F>(
    inputs: &[&[u8]],
    progress: &mut dyn FnMut(u64, u64) -> bool,
    split: F,
) -> Result<FxHashMap<String, u64>, CoreError>
where
    F: Fn(&str, &mut dyn FnMut(&str)) + Sync,
{
    count_chunks(inputs, progress, |chunk| {
        let mut counts: FxHashMap<String, u64> = FxHashMap::default();
        for line in chunk.split_inclusive(|&b| b == b'\n') {
            let text = String::from_utf8_lossy(line);
            split(&text, &mut |w: &str| match counts.get_mut(w) {
                Some(c) => *c += 1,
                None => {
                    counts.insert(w.to_string(), 1);
                }
            });
        }
        Ok(counts)
    })
}

/// The shared loop: line-aligned chunks counted in parallel, merged in a fixed order.
fn count_chunks<K, F>(
    inputs: &[&[u8]],
    progress: &mut dyn FnMut(u64, u64) -> bool,
    per_chunk: F,
) -> Result<FxHashMap<K, u64>, CoreError>
where
    K: std::hash::Hash + Eq + Send,
    F: Fn(&[u8]) -> Result<FxHashMap<K, u64>, CoreError> + Sync,
{
    let chunks: Vec<&[u8]> = inputs.iter().flat_map(|d| line_aligned_chunks(d)).collect();
    let total: u64 = chunks.iter().map(|c| c.len() as u64).sum();
    let batch = rayon::current_num_threads().max(1) * 2;
    let mut counts: FxHashMap<K, u64> = FxHashMap::default();
    let mut done = 0u64;
    for group in chunks.chunks(batch) {
        let partial: Vec<Result<FxHashMap<K, u64>, CoreError>> = group.par_iter().map(|c| per_chunk(c)).collect();
        for p in partial {
            for (k, v) in p? {
                *counts.entry(k).or_insert(0) += v;
            }
        }
        done += group.iter().map(|c| c.len() as u64).sum::<u64>();
        if !progress(done, total) {
            return Err(CoreError::Interrupted);
        }
    }
    Ok(counts)
}

/// Cuts `data` into pieces of about CHUNK bytes that end just after a `\n` (or at the end).
fn line_aligned_chunks(data: &[u8]) -> Vec<&[u8]> {
    let mut out = vec![];
    let mut start = 0;
    while start < data.len() {
        let mut end = (start + CHUNK).min(data.len());
        if end < data.len() {
            end = match data[end..].iter().position(|&b| b == b'\n') {
                Some(p) => end + p + 1,
                None => data.len(),
            };
        }
        out.push(&data[start..end]);
        start = end;
    }
    out
}

fn count_chunk(chunk: &[u8], splitter: &Splitter) -> Result<PieceCounts, CoreError> {
    let mut counts = PieceCounts::default();
    for line in chunk.split_inclusive(|&b| b == b'\n') {
        count_line(line, splitter, &mut counts)?;
    }
    Ok(counts)
}

fn count_line(mut line: &[u8], splitter: &Splitter, counts: &mut PieceCounts) -> Result<(), CoreError> {
    while !line.is_empty() {
        let (valid, rest) = match std::str::from_utf8(line) {
            Ok(s) => (s, &line[line.len()..]),
            Err(e) => {
                let (ok, bad) = line.split_at(e.valid_up_to());
                // `ok` is exactly the prefix that from_utf8 validated.
                (std::str::from_utf8(ok).unwrap_or(""), bad)
            }
        };
        splitter.split(valid, |a, b| {
            let piece = &valid.as_bytes()[a..b];
            match counts.get_mut(piece) {
                Some(c) => *c += 1,
                None => {
                    counts.insert(piece.to_vec(), 1);
                }
            }
        })?;
        if rest.is_empty() {
            break;
        }
        // One invalid byte becomes a piece of its own; continue after it.
        *counts.entry(vec![rest[0]]).or_insert(0) += 1;
        line = &rest[1..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_do_not_depend_on_line_order_or_threads() {
        let s = Splitter::new(super::super::GPT2).unwrap();
        let a = b"the cat\nthe car\nthe rat\n".to_vec();
        let b = b"the rat\nthe cat\nthe car\n".to_vec();
        let ca = count_pieces(&[&a], &s, &mut |_, _| true).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let cb = pool.install(|| count_pieces(&[&b], &s, &mut |_, _| true).unwrap());
        assert_eq!(ca, cb);
        assert_eq!(ca[b" cat".as_slice()], 1);
        assert_eq!(ca[b"the".as_slice()], 3);
    }

    #[test]
    fn invalid_utf8_bytes_are_pieces_of_their_own() {
        let s = Splitter::new(super::super::GPT2).unwrap();
        let c = count_pieces(&[b"ab\xffcd"], &s, &mut |_, _| true).unwrap();
        assert_eq!(c[b"ab".as_slice()], 1);
        assert_eq!(c[b"\xff".as_slice()], 1);
        assert_eq!(c[b"cd".as_slice()], 1);
    }
}
