//! The one batch path, for every algorithm: many texts encoded in parallel into flat buffers.
//!
//! Why flat: a `Vec` per text costs an allocation and a free per text, which on a batch of
//! short lines is a noticeable share of the time. Each task instead appends its texts' ids to
//! one buffer and records where each text ends (`Flat`); the binding makes the result lists
//! from those slices. Texts are taken by reference (the binding borrows Python's strings).
//!
//! `threads == 1` runs on the calling thread: a pool round trip costs more than it saves.
//! Otherwise the texts go in tasks of consecutive texts to a pool of `threads` threads (0: the
//! global pool). A task is cut by bytes as well as by count (`tasks`): cut by count alone, a
//! batch of 371 documents of 64 KB went in 16 tasks of 1.5 MB, and the thread that took the
//! last one ran alone for up to 25 ms of a 200 ms batch. Tasks of at most `TASK_BYTES` bound
//! that tail to a few milliseconds, and are still large enough that a task's own cost (a rayon
//! job, two buffers) is lost in its work.
//!
//! A task's id buffer is reserved from its bytes (`IDS_PER_BYTE`), so it does not grow by
//! doubling, copying every id so far each time, on the way to its size.

use std::ops::Deref;

use rayon::prelude::*;

use super::{Rule, Tokenizer};
use crate::error::CoreError;
use crate::pool;

/// Most texts per parallel task: enough to amortize a task, few enough to balance.
const MAX_CHUNK: usize = 256;
/// Tasks per thread to aim for, so that uneven texts still balance.
const TASKS_PER_THREAD: usize = 8;
/// Most bytes per task (a task holds at least one text, however long): about 4 ms of encoding
/// on one core, the most the last task can keep one thread busy alone.
const TASK_BYTES: usize = 256 << 10;
/// Ids reserved per byte of a task's texts: byte-level BPE gives about one id per 4 bytes of
/// prose or code (cl100k, o200k), more on CJK text, where the buffer grows once or twice.
const IDS_PER_BYTE: f64 = 0.3;

/// The ids of consecutive texts: text k is `ids[ends[k-1]..ends[k]]` (from 0 for the first).
#[derive(Debug, Default, PartialEq)]
pub struct Flat {
    pub ids: Vec<u32>,
    pub ends: Vec<usize>,
}

impl Flat {
    /// Each text's ids, in order.
    pub fn texts(&self) -> impl Iterator<Item = &[u32]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(s, &e)| &self.ids[s..e])
    }
}

impl Tokenizer {
    /// `encode(text, rule)` for every text, in order, as flat buffers (one per task). When
    /// texts hold refused strings, the error names the first such text by its index.
    pub fn encode_batch<T>(&self, texts: &[T], rule: &Rule, threads: usize) -> Result<Vec<Flat>, CoreError>
    where
        T: Deref<Target = str> + Sync,
    {
        let matcher = rule.emit.as_deref();
        let encode = |first: usize, texts: &[T]| -> Result<Flat, CoreError> {
            let bytes: usize = texts.iter().map(|t| t.len()).sum();
            let ids = Vec::with_capacity((bytes as f64 * IDS_PER_BYTE) as usize + 16);
            let mut flat = Flat { ids, ends: Vec::with_capacity(texts.len()) };
            for (i, t) in texts.iter().enumerate() {
                rule.check(t, Some(first + i))?;
                self.encode_with(matcher, t, &mut flat.ids)?;
                flat.ends.push(flat.ids.len());
            }
            Ok(flat)
        };
        if threads == 1 {
            return Ok(vec![encode(0, texts)?]);
        }
        let parts: Vec<Result<Flat, CoreError>> = pool::install(threads, || {
            let starts = tasks(texts, rayon::current_num_threads());
            starts.par_windows(2).map(|w| encode(w[0], &texts[w[0]..w[1]])).collect()
        })?;
        // The first error in text order, whichever thread met it first: a result never depends
        // on the thread count.
        parts.into_iter().collect()
    }
}

/// Where each task starts, then `texts.len()`: runs of consecutive texts of at most
/// `MAX_CHUNK` texts and (past their first text) `TASK_BYTES` bytes, and of at most
/// `texts.len() / (threads * TASKS_PER_THREAD)` texts so that a batch of short texts still
/// makes a few tasks per thread. Depends on the texts' lengths and `threads` only; a result
/// never depends on it.
fn tasks<T: Deref<Target = str>>(texts: &[T], threads: usize) -> Vec<usize> {
    let most = (texts.len() / (threads.max(1) * TASKS_PER_THREAD)).clamp(1, MAX_CHUNK);
    let mut starts = vec![0];
    let (mut n, mut bytes) = (0, 0);
    for (i, t) in texts.iter().enumerate() {
        if n > 0 && (n == most || bytes + t.len() > TASK_BYTES) {
            starts.push(i);
            (n, bytes) = (0, 0);
        }
        n += 1;
        bytes += t.len();
    }
    if !texts.is_empty() {
        starts.push(texts.len());
    }
    starts
}

impl Tokenizer {
    /// The number of ids of each text, in order (`encode_batch` without handing the ids out).
    pub fn count_batch<T>(&self, texts: &[T], rule: &Rule, threads: usize) -> Result<Vec<usize>, CoreError>
    where
        T: Deref<Target = str> + Sync,
    {
        let parts = self.encode_batch(texts, rule, threads)?;
        let mut out = Vec::with_capacity(texts.len());
        for part in &parts {
            let starts = std::iter::once(0).chain(part.ends.iter().copied());
            out.extend(starts.zip(&part.ends).map(|(s, &e)| e - s));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::tiny_byte_level as tok;

    #[test]
    fn batches_equal_one_by_one_for_any_thread_count() {
        let t = tok();
        let texts: Vec<String> =
            (0..1000).map(|i| ["ab ab", "", "x<s>ab", "<s>", "abab ab"][i % 5].repeat(i % 7)).collect();
        let allowed = t.allowing(&["<s>".to_string()]).unwrap();
        let want: Vec<Vec<u32>> = texts.iter().map(|s| t.encode(s, &allowed).unwrap()).collect();
        for threads in [0, 1, 2, 3] {
            let parts = t.encode_batch(&texts, &allowed, threads).unwrap();
            let got: Vec<Vec<u32>> = parts.iter().flat_map(Flat::texts).map(<[u32]>::to_vec).collect();
            assert_eq!(got, want, "threads {threads}");
        }
        let counts: Vec<usize> = want.iter().map(Vec::len).collect();
        assert_eq!(t.count_batch(&texts, &allowed, 2).unwrap(), counts);
        assert_eq!(t.count(&texts[9], &allowed).unwrap(), counts[9]);
        let plain = t.encode_batch(&texts, &Rule::default(), 2).unwrap();
        let got: Vec<Vec<u32>> = plain.iter().flat_map(Flat::texts).map(<[u32]>::to_vec).collect();
        assert_eq!(got, texts.iter().map(|s| t.encode_ordinary(s).unwrap()).collect::<Vec<_>>());
    }

    #[test]
    fn tasks_are_cut_by_bytes_and_by_count_and_cover_every_text_in_order() {
        let texts: Vec<String> = (0..4000).map(|i| "x".repeat(if i == 7 { 1 << 20 } else { 4096 })).collect();
        let starts = tasks(&texts, 2);
        assert_eq!((starts[0], *starts.last().unwrap()), (0, texts.len()));
        for w in starts.windows(2) {
            let part = &texts[w[0]..w[1]];
            let bytes: usize = part.iter().map(String::len).sum();
            assert!(w[0] < w[1] && part.len() <= MAX_CHUNK, "{w:?}");
            assert!(part.len() == 1 || bytes <= TASK_BYTES, "{w:?} holds {bytes} bytes");
        }
        // The 1 MB text is a task of its own; 64 texts of 4 KB fill a task's bytes.
        assert!(starts.windows(2).any(|w| w == [7, 8]));
        assert_eq!(starts[3] - starts[2], TASK_BYTES / 4096);
        // Short texts: cut by count, a few tasks per thread.
        let short = vec!["ab"; 1000];
        assert_eq!(tasks(&short, 2).len() - 1, 1000usize.div_ceil(1000 / (2 * TASKS_PER_THREAD)));
        assert_eq!(tasks(&Vec::<String>::new(), 2), vec![0]);
    }

    #[test]
    fn a_few_long_texts_still_spread_over_tasks() {
        let texts = vec!["ab ".repeat(1000); 8];
        let parts = tok().encode_batch(&texts, &Rule::default(), 2).unwrap();
        assert_eq!(parts.len(), 8);
        assert!(tok()
            .encode_batch(&Vec::<String>::new(), &Rule::default(), 2)
            .unwrap()
            .iter()
            .all(|p| p.ends.is_empty()));
    }
}
