//! The counts behind LiteToken's residue measure (Sun, Yang, Lin and Zhang, "LiteToken:
//! Removing Intermediate Merge Residues From BPE Tokenizers", arXiv 2602.04706): encoding a
//! text with BPE's merge loop, how often each token is emitted (its final frequency F1) and how
//! often it is formed and then merged into a longer token (its intermediate frequency F2). A
//! token with F1 / (F1 + F2) near 0 exists only as a step towards longer tokens: a residue.
//!
//! The merge loop is `bpe/dropout.rs`'s at p = 0, which gives exactly the encoder's ids (tested
//! there), told of every merge. Special-token strings count as ordinary text.

use std::ops::Deref;

use rayon::prelude::*;

use super::Tokenizer;
use crate::error::CoreError;
use crate::pool;

/// Per token id: times emitted (`emitted`), formed by a merge (`formed`: never for a base
/// symbol) and merged into a longer token (`consumed`).
#[derive(Debug, Default, PartialEq)]
pub struct Trace {
    pub emitted: Vec<u64>,
    pub formed: Vec<u64>,
    pub consumed: Vec<u64>,
}

impl Trace {
    fn new(n: usize) -> Trace {
        Trace { emitted: vec![0; n], formed: vec![0; n], consumed: vec![0; n] }
    }

    /// One merge of `a` then `b` into `z`.
    pub fn merged(&mut self, a: u32, b: u32, z: u32) {
        self.consumed[a as usize] += 1;
        self.consumed[b as usize] += 1;
        self.formed[z as usize] += 1;
    }

    fn add(mut self, other: Trace) -> Trace {
        for (mine, theirs) in
            [(&mut self.emitted, other.emitted), (&mut self.formed, other.formed), (&mut self.consumed, other.consumed)]
        {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
        self
    }
}

impl Tokenizer {
    /// The emitted, formed and consumed counts of every token over `texts`, on `threads` threads (the
    /// sums do not depend on them).
    pub fn trace_batch<T>(&self, texts: &[T], threads: usize) -> Result<Trace, CoreError>
    where
        T: Deref<Target = str> + Sync,
    {
        let n = self.id_bound();
        let encoder = &*self.encoder;
        let one = |texts: &[T]| -> Result<Trace, CoreError> {
            let mut trace = Trace::new(n);
            let mut ids = Vec::new();
            for t in texts {
                ids.clear();
                encoder.encode_traced(t, &mut trace, &mut ids)?;
                for &id in &ids {
                    trace.emitted[id as usize] += 1;
                }
            }
            Ok(trace)
        };
        if threads == 1 {
            return one(texts);
        }
        pool::install(threads, || {
            let chunk = (texts.len() / (rayon::current_num_threads() * 4)).clamp(1, 4096);
            texts.par_chunks(chunk).map(one).try_reduce(|| Trace::new(n), |a, b| Ok(a.add(b)))
        })?
    }
}

#[cfg(test)]
mod tests {
    use crate::encode::tiny_byte_level;

    /// "ab" (256) and " ab" (257): " ab ab" is [257, 257]; each " ab" forms "ab" from a and b,
    /// then " ab" from " " and "ab".
    #[test]
    fn counts_emitted_and_consumed_tokens() {
        let t = tiny_byte_level();
        for threads in [1, 2] {
            let trace = t.trace_batch(&[" ab ab", "ab"], threads).unwrap();
            assert_eq!(trace.emitted[257], 2);
            assert_eq!(trace.emitted[256], 1);
            assert_eq!(trace.consumed[256], 2);
            assert_eq!(trace.consumed[b'a' as usize], 3);
            assert_eq!(trace.consumed[b' ' as usize], 2);
            assert_eq!(trace.consumed[257], 0);
            assert_eq!((trace.formed[256], trace.formed[257], trace.formed[b'a' as usize]), (3, 2, 0));
        }
    }
}
