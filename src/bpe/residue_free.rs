//! A BPE version without its residues (issue 28, item 3c; LiteToken's residues, arXiv
//! 2602.04706): the parent's encoder, then each emitted token of the removed set replaced by
//! its split: its two parents (the first merge that made it), each parent still in the removed
//! set split in turn. PickyBPE's first encoder applied removals the same way, after the merges
//! (Chizhov et al., arXiv 2409.04599).
//!
//! Every other token keeps its id, and a text whose parent segmentation emits no removed token
//! encodes exactly as before: the removed tokens are still formed and merged further inside the
//! merge loop (they are steps towards longer tokens: that is what a residue is), only never
//! emitted. Removed ids are holes in the id space; the vocabulary size leaves them out.

use rustc_hash::FxHashMap;

use crate::encode::{Encode, Kind, Rng, Trace};
use crate::error::CoreError;

pub struct ResidueFree {
    inner: Box<dyn Encode>,
    /// removed id -> the ids it is emitted as
    split: FxHashMap<u32, Vec<u32>>,
    removed: Vec<u32>,
}

impl ResidueFree {
    /// `merges` (left, right, result) of the parent, `removed` the ids taken out.
    pub fn new(inner: Box<dyn Encode>, merges: &[(u32, u32, u32)], removed: &[u32]) -> Result<ResidueFree, CoreError> {
        let mut parents: FxHashMap<u32, (u32, u32)> = FxHashMap::default();
        for &(l, r, z) in merges {
            parents.entry(z).or_insert((l, r));
        }
        let gone: rustc_hash::FxHashSet<u32> = removed.iter().copied().collect();
        fn walk(
            t: u32,
            gone: &rustc_hash::FxHashSet<u32>,
            parents: &FxHashMap<u32, (u32, u32)>,
            out: &mut Vec<u32>,
        ) -> Result<(), CoreError> {
            if !gone.contains(&t) {
                out.push(t);
                return Ok(());
            }
            let &(l, r) = parents.get(&t).ok_or_else(|| {
                CoreError::input(format!("removed token {t} was made by no merge; the version is damaged"))
            })?;
            walk(l, gone, parents, out)?;
            walk(r, gone, parents, out)
        }
        let mut split = FxHashMap::default();
        for &t in removed {
            let mut out = Vec::new();
            walk(t, &gone, &parents, &mut out)?;
            split.insert(t, out);
        }
        Ok(ResidueFree { inner, split, removed: removed.to_vec() })
    }

    fn resplit(&self, out: &mut Vec<u32>, from: usize, mut trace: Option<&mut Trace>) {
        if !out[from..].iter().any(|t| self.split.contains_key(t)) {
            return;
        }
        let tail: Vec<u32> = out.drain(from..).collect();
        for t in tail {
            match self.split.get(&t) {
                Some(parts) => {
                    if let Some(tr) = trace.as_deref_mut() {
                        tr.consumed[t as usize] += 1;
                    }
                    out.extend_from_slice(parts)
                }
                None => out.push(t),
            }
        }
    }
}

impl Encode for ResidueFree {
    fn kind(&self) -> Kind {
        self.inner.kind()
    }

    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        let from = out.len();
        self.inner.encode_into(text, out)?;
        self.resplit(out, from, None);
        Ok(())
    }

    fn encode_dropout(&self, text: &str, p: f64, rng: &mut Rng, out: &mut Vec<u32>) -> Result<(), CoreError> {
        let from = out.len();
        self.inner.encode_dropout(text, p, rng, out)?;
        self.resplit(out, from, None);
        Ok(())
    }

    /// The parent's trace, then the splits; a removed token is no token of this version, so its
    /// `formed` count is cleared (the residue measure judges the vocabulary only).
    fn encode_traced(&self, text: &str, trace: &mut Trace, out: &mut Vec<u32>) -> Result<(), CoreError> {
        let from = out.len();
        self.inner.encode_traced(text, trace, out)?;
        self.resplit(out, from, Some(trace));
        for &t in &self.removed {
            trace.formed[t as usize] = 0;
        }
        Ok(())
    }

    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, CoreError> {
        self.inner.decode_bytes(ids)
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.inner.token_bytes(id)
    }

    fn concatenates(&self) -> bool {
        self.inner.concatenates()
    }

    fn vocab_size(&self) -> usize {
        self.inner.vocab_size() - self.removed.len()
    }

    fn id_bound(&self) -> usize {
        self.inner.id_bound()
    }
}
