//! The PickyBPE encoder (Chizhov et al., arXiv 2409.04599; training is `picky_train.rs`): the
//! training's events replayed on each piece of the pattern, in the order they were recorded.
//!
//! Events are numbered 1, 2, ...: merge rank r, then the removals recorded after it. Replaying
//! them in order on a piece's bytes (the paper's rule, the reference the tests compare with):
//!
//! - merge (a, b) -> z: every occurrence of the pair, left to right, becomes z;
//! - removal of x: every occurrence of x becomes x's split (its parents' walk at that moment).
//!
//! Done directly that would cost events x length. Instead each pair of neighbours, made at
//! event t, waits in a heap for the first merge event of that pair after t, and each symbol
//! made at event t for the first removal event of its token after t; the heap gives them in
//! event order, ties (one merge, several places) left to right by byte offset, which is the
//! order the rule applies them in. An entry whose symbols changed since is skipped. A piece of
//! n bytes costs O(n log n) (`"a" * 100000` included).
//!
//! A token that the training removed for good (kind `removed`) keeps its id, so merges and
//! removals can name it, but the replay never leaves one in the output: it is split before the
//! end. The version's vocabulary is the other tokens.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use crate::encode::{Encode, Kind, Trace};
use crate::error::CoreError;
use crate::pretok::Splitter;

enum Event {
    Merge { result: u32 },
    Remove { split: Vec<u32> },
}

pub struct PickyEncoder {
    /// id -> bytes (None: no token)
    bytes: Vec<Option<Vec<u8>>>,
    removed_for_good: Vec<bool>,
    byte_ids: [u32; 256],
    /// events[e - 1] is event e
    events: Vec<Event>,
    /// pair -> its merge events, ascending; token -> its removal events, ascending
    merge_at: FxHashMap<u64, Vec<u32>>,
    remove_at: FxHashMap<u32, Vec<u32>>,
    splitter: Splitter,
    vocab: usize,
}

#[inline]
fn key(l: u32, r: u32) -> u64 {
    (l as u64) << 32 | r as u64
}

/// The first event in `list` after `t`.
#[inline]
fn after(list: Option<&Vec<u32>>, t: u32) -> Option<u32> {
    let list = list?;
    list.get(list.partition_point(|&e| e <= t)).copied()
}

#[derive(Clone, Copy)]
struct Sym {
    token: u32,
    at: u32,
    gen: u32,
    prev: u32,
    next: u32,
}

const NONE: u32 = u32::MAX;

impl PickyEncoder {
    /// `tokens`: (id, bytes, removed for good); `merges` in rank order; `removals`: (rank of
    /// the merge they follow, token), in the order recorded. Each removed token's split is
    /// found by replaying which tokens are present (merged in, removed) up to its removal.
    pub fn new(
        tokens: Vec<(u32, &[u8], bool)>,
        merges: &[(u32, u32, u32)],
        removals: &[(u32, u32)],
        splitter: Splitter,
    ) -> Result<PickyEncoder, CoreError> {
        let damaged = |what: &str| CoreError::input(format!("this PickyBPE version's {what}; the version is damaged"));
        let bound = tokens.iter().map(|t| t.0 as usize + 1).max().unwrap_or(0);
        let mut bytes = vec![None; bound];
        let mut removed_for_good = vec![false; bound];
        let mut byte_ids = [NONE; 256];
        let vocab = tokens.iter().filter(|t| !t.2).count();
        for (id, b, gone) in tokens {
            if b.len() == 1 && byte_ids[b[0] as usize] == NONE {
                byte_ids[b[0] as usize] = id;
            }
            bytes[id as usize] = Some(b.to_vec());
            removed_for_good[id as usize] = gone;
        }
        if byte_ids.contains(&NONE) {
            return Err(damaged("vocabulary lacks a single byte"));
        }
        let known = |t: u32| (t as usize) < bound && bytes[t as usize].is_some();
        let mut present = vec![false; bound];
        let mut parents: Vec<Option<(u32, u32)>> = vec![None; bound];
        for &b in &byte_ids {
            present[b as usize] = true;
        }
        let mut events = Vec::with_capacity(merges.len() + removals.len());
        let mut merge_at: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
        let mut remove_at: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        let mut next_removal = removals.iter().peekable();
        fn walk(t: u32, present: &[bool], parents: &[Option<(u32, u32)>], out: &mut Vec<u32>) {
            match parents[t as usize] {
                Some((l, r)) if !present[t as usize] => {
                    walk(l, present, parents, out);
                    walk(r, present, parents, out);
                }
                _ => out.push(t),
            }
        }
        for (rank, &(l, r, z)) in merges.iter().enumerate() {
            if !(known(l) && known(r) && known(z)) {
                return Err(damaged("merges name a token it does not have"));
            }
            events.push(Event::Merge { result: z });
            merge_at.entry(key(l, r)).or_default().push(events.len() as u32);
            present[z as usize] = true;
            if parents[z as usize].is_none() && !byte_ids.contains(&z) {
                parents[z as usize] = Some((l, r));
            }
            while let Some(&&(after, x)) = next_removal.peek() {
                if after as usize != rank {
                    break;
                }
                next_removal.next();
                let Some((a, b)) = parents.get(x as usize).copied().flatten() else {
                    return Err(damaged("removals name a token no merge has made"));
                };
                if !present[x as usize] {
                    return Err(damaged("removals remove a token twice"));
                }
                present[x as usize] = false;
                let mut split = Vec::new();
                walk(a, &present, &parents, &mut split);
                walk(b, &present, &parents, &mut split);
                events.push(Event::Remove { split });
                remove_at.entry(x).or_default().push(events.len() as u32);
            }
        }
        if next_removal.next().is_some() {
            return Err(damaged("removals come after its last merge or out of order"));
        }
        if (0..bound).any(|t| removed_for_good[t] && present[t]) {
            return Err(damaged("tokens marked removed are in the vocabulary at the end of its events"));
        }
        Ok(PickyEncoder { bytes, removed_for_good, byte_ids, events, merge_at, remove_at, splitter, vocab })
    }

    /// Replays the events on one piece, appending its ids; `trace` is told of each merge and
    /// of each split of a token in the vocabulary (its occurrence was a step, not emitted).
    fn piece(&self, piece: &[u8], out: &mut Vec<u32>, mut trace: Option<&mut Trace>) {
        if piece.is_empty() {
            return;
        }
        let n = piece.len();
        let mut syms: Vec<Sym> = piece
            .iter()
            .enumerate()
            .map(|(i, &b)| Sym {
                token: self.byte_ids[b as usize],
                at: i as u32,
                gen: 0,
                prev: if i == 0 { NONE } else { i as u32 - 1 },
                next: if i + 1 == n { NONE } else { i as u32 + 1 },
            })
            .collect();
        // (Reverse(event), Reverse(offset), symbol, its gen, right symbol or NONE, its gen)
        type Item = (Reverse<u32>, Reverse<u32>, u32, u32, u32, u32);
        let mut heap: BinaryHeap<Item> = BinaryHeap::new();
        let pair_entry = |syms: &[Sym], i: u32, t: u32, heap: &mut BinaryHeap<Item>| {
            let a = syms[i as usize];
            if a.next == NONE {
                return;
            }
            let b = syms[a.next as usize];
            if let Some(e) = after(self.merge_at.get(&key(a.token, b.token)), t) {
                heap.push((Reverse(e), Reverse(a.at), i, a.gen, a.next, b.gen));
            }
        };
        let sym_entry = |syms: &[Sym], i: u32, t: u32, heap: &mut BinaryHeap<Item>| {
            let a = syms[i as usize];
            if let Some(e) = after(self.remove_at.get(&a.token), t) {
                heap.push((Reverse(e), Reverse(a.at), i, a.gen, NONE, 0));
            }
        };
        for i in 0..n as u32 {
            pair_entry(&syms, i, 0, &mut heap);
        }
        while let Some((Reverse(e), _, i, gen, j, jgen)) = heap.pop() {
            let a = syms[i as usize];
            if a.gen != gen {
                continue;
            }
            match &self.events[e as usize - 1] {
                Event::Merge { result } => {
                    if a.next != j || syms[j as usize].gen != jgen {
                        continue;
                    }
                    let b = syms[j as usize];
                    if let Some(t) = trace.as_deref_mut() {
                        t.consumed[a.token as usize] += 1;
                        t.consumed[b.token as usize] += 1;
                        if !self.removed_for_good[*result as usize] {
                            t.formed[*result as usize] += 1;
                        }
                    }
                    syms[i as usize] = Sym { token: *result, gen: gen + 1, next: b.next, ..a };
                    syms[j as usize].gen += 1;
                    if b.next != NONE {
                        syms[b.next as usize].prev = i;
                    }
                    sym_entry(&syms, i, e, &mut heap);
                    pair_entry(&syms, i, e, &mut heap);
                    if a.prev != NONE {
                        pair_entry(&syms, a.prev, e, &mut heap);
                    }
                }
                Event::Remove { split, .. } => {
                    if j != NONE {
                        continue;
                    }
                    if let Some(t) = trace.as_deref_mut() {
                        t.consumed[a.token as usize] += 1;
                    }
                    // the first part takes the symbol's place, the others are new symbols after it
                    let mut at = a.at;
                    let mut last = i;
                    syms[i as usize] = Sym { token: split[0], gen: gen + 1, ..a };
                    let mut made = vec![i];
                    for &p in &split[1..] {
                        at += self.bytes[syms[last as usize].token as usize].as_ref().map_or(0, |b| b.len() as u32);
                        let k = syms.len() as u32;
                        syms.push(Sym { token: p, at, gen: 0, prev: last, next: a.next });
                        syms[last as usize].next = k;
                        last = k;
                        made.push(k);
                    }
                    if a.next != NONE {
                        syms[a.next as usize].prev = last;
                    }
                    for &k in &made {
                        sym_entry(&syms, k, e, &mut heap);
                        pair_entry(&syms, k, e, &mut heap);
                    }
                    if a.prev != NONE {
                        pair_entry(&syms, a.prev, e, &mut heap);
                    }
                }
            }
        }
        let mut i = 0u32;
        while i != NONE {
            out.push(syms[i as usize].token);
            i = syms[i as usize].next;
        }
    }

    fn encode(&self, text: &str, out: &mut Vec<u32>, mut trace: Option<&mut Trace>) -> Result<(), CoreError> {
        let bytes = text.as_bytes();
        self.splitter.split(text, |a, b| self.piece(&bytes[a..b], out, trace.as_deref_mut()))
    }
}

impl Encode for PickyEncoder {
    fn kind(&self) -> Kind {
        Kind::PickyBpe
    }

    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        self.encode(text, out, None)
    }

    fn encode_traced(&self, text: &str, trace: &mut Trace, out: &mut Vec<u32>) -> Result<(), CoreError> {
        self.encode(text, out, Some(trace))
    }

    /// The events replayed on one counted piece: what continued training (`extend.rs`) starts
    /// from, so merges learned after a removal see the text as this version segments it.
    fn segment_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), CoreError> {
        self.piece(piece, out, None);
        Ok(())
    }

    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, CoreError> {
        let mut out = Vec::new();
        for &id in ids {
            out.extend_from_slice(self.token_bytes(id).ok_or_else(|| crate::encode::unknown_id(id, self.bytes.len()))?);
        }
        Ok(out)
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.bytes.get(id as usize)?.as_deref()
    }

    fn concatenates(&self) -> bool {
        true
    }

    fn vocab_size(&self) -> usize {
        self.vocab
    }

    fn id_bound(&self) -> usize {
        self.bytes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::GPT2;

    fn tiny() -> PickyEncoder {
        // 256 ab, 257 abc, 258 abcd; "ab" removed after merge 1 (ab+c), "abc" after merge 2.
        let mut tokens: Vec<(u32, Vec<u8>, bool)> = (0..=255u8).map(|b| (b as u32, vec![b], false)).collect();
        tokens.push((256, b"ab".to_vec(), true));
        tokens.push((257, b"abc".to_vec(), true));
        tokens.push((258, b"abcd".to_vec(), false));
        let tokens = tokens.iter().map(|(i, b, g)| (*i, &b[..], *g)).collect();
        let merges = [(b'a' as u32, b'b' as u32, 256), (256, b'c' as u32, 257), (257, b'd' as u32, 258)];
        PickyEncoder::new(tokens, &merges, &[(1, 256), (2, 257)], Splitter::new(GPT2).unwrap()).unwrap()
    }

    #[test]
    fn removed_tokens_are_split_in_event_order() {
        let enc = tiny();
        let mut out = Vec::new();
        enc.encode_into("abcd abc ab", &mut out).unwrap();
        let (a, b, c, sp) = (b'a' as u32, b'b' as u32, b'c' as u32, b' ' as u32);
        // "abcd" merges through; "abc" is split at event 5 into a, b, c ("ab" was removed before)
        assert_eq!(out, [258, sp, a, b, c, sp, a, b]);
        assert_eq!(enc.vocab_size(), 257);
    }

    #[test]
    fn a_long_run_of_one_letter_is_fast_and_whole() {
        let enc = tiny();
        let text = "ab".repeat(50_000);
        let mut out = Vec::new();
        enc.encode_into(&text, &mut out).unwrap();
        assert_eq!(enc.decode_bytes(&out).unwrap(), text.as_bytes());
    }
}
