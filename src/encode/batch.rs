//! The one batch path, for every algorithm: many texts encoded in parallel into flat buffers.
//!
//! Why flat: a `Vec` per text costs an allocation and a free per text, which on a batch of
//! short lines is a noticeable share of the time. Each task instead appends its texts' ids to
//! one buffer and records where each text ends (`Flat`); the binding makes the result lists
//! from those slices. Texts are taken by reference (the binding borrows Python's strings).
//!
//! `threads == 1` runs on the calling thread: a pool round trip costs more than it saves.
//! Otherwise the texts go in chunks to a pool of `threads` threads (0: the global pool);
//! chunks are small enough that a few long texts still spread over the threads.

use std::ops::Deref;

use rayon::prelude::*;

use super::{Rule, Tokenizer};
use crate::error::CoreError;
use crate::pool;

/// Most texts per parallel task: enough to amortize a task, few enough to balance.
const MAX_CHUNK: usize = 256;
/// Tasks per thread to aim for, so that uneven texts still balance.
const TASKS_PER_THREAD: usize = 8;

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
            let mut flat = Flat { ids: Vec::new(), ends: Vec::with_capacity(texts.len()) };
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
            let chunk = (texts.len() / (rayon::current_num_threads() * TASKS_PER_THREAD)).clamp(1, MAX_CHUNK);
            texts.par_chunks(chunk).enumerate().map(|(k, part)| encode(k * chunk, part)).collect()
        })?;
        // The first error in text order, whichever thread met it first: a result never depends
        // on the thread count.
        parts.into_iter().collect()
    }
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
