//! Hugging Face's BPE model (tokenizers' `models/bpe/model.rs` and `word.rs`) over one
//! pre-tokenized piece, for the layouts tokreg's own BPE encoders do not cover:
//!
//! 1. With `ignore_merges`, a piece that is a token is that token.
//! 2. The piece becomes symbols: for byte-level files each byte (HF's ByteLevel step spells
//!    each byte as one character of GPT-2's table; tokreg stores the raw bytes, so the byte
//!    is the symbol), else each character, with `continuing_subword_prefix` in front of all
//!    but the first and `end_of_word_suffix` after the last. A symbol that is no token becomes
//!    its `<0xNN>` byte tokens (`byte_fallback`, when all exist), else the unknown token (runs
//!    of them fused into one with `fuse_unk`), else it is dropped.
//! 3. Merges: the adjacent pair with the lowest merge rank is joined, the leftmost first on
//!    ties, until no listed pair is left (HF's priority queue, with stale entries skipped).
//!
//! Spans are in bytes of the piece; a byte-fallback token spans its one byte.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use crate::error::CoreError;

pub struct Options {
    pub byte_level: bool,
    pub unk: Option<u32>,
    pub continuing_prefix: Option<String>,
    pub end_of_word_suffix: Option<String>,
    pub fuse_unk: bool,
    pub byte_fallback: bool,
    pub ignore_merges: bool,
}

pub struct Model {
    vocab: FxHashMap<Vec<u8>, u32>,
    /// (left, right) -> (rank, merged id)
    merges: FxHashMap<(u32, u32), (u32, u32)>,
    byte_ids: Option<Box<[Option<u32>; 256]>>,
    opts: Options,
}

#[derive(Clone, Copy)]
struct Sym {
    id: u32,
    start: usize,
    end: usize,
    prev: usize,
    next: usize,
    alive: bool,
}

const NONE: usize = usize::MAX;

impl Model {
    /// `tokens`: (id, bytes) of every token; `merges`: (left, right, result) in rank order.
    pub fn new(tokens: &[(u32, Vec<u8>)], merges: &[(u32, u32, u32)], opts: Options) -> Result<Model, CoreError> {
        let mut vocab = FxHashMap::default();
        for (id, bytes) in tokens {
            vocab.insert(bytes.clone(), *id);
        }
        let mut table = FxHashMap::default();
        // A pair listed twice keeps its last rank, as HF's map does.
        for (rank, &(a, b, z)) in merges.iter().enumerate() {
            table.insert((a, b), (rank as u32, z));
        }
        let byte_ids = opts.byte_fallback.then(|| {
            let mut t = [None; 256];
            for (b, slot) in t.iter_mut().enumerate() {
                *slot = vocab.get(format!("<0x{b:02X}>").as_bytes()).copied();
            }
            Box::new(t)
        });
        Ok(Model { vocab, merges: table, byte_ids, opts })
    }

    /// Appends (id, start, end) of the piece's tokens.
    pub fn encode(&self, piece: &str, out: &mut Vec<(u32, usize, usize)>) {
        if piece.is_empty() {
            return;
        }
        if self.opts.ignore_merges {
            if let Some(&id) = self.vocab.get(piece.as_bytes()) {
                out.push((id, 0, piece.len()));
                return;
            }
        }
        let mut syms = self.symbols(piece);
        self.merge(&mut syms);
        out.extend(syms.iter().filter(|s| s.alive).map(|s| (s.id, s.start, s.end)));
    }

    fn symbols(&self, piece: &str) -> Vec<Sym> {
        let mut syms: Vec<Sym> = Vec::with_capacity(piece.len());
        let push = |syms: &mut Vec<Sym>, id: u32, start: usize, end: usize| {
            let n = syms.len();
            syms.push(Sym { id, start, end, prev: if n == 0 { NONE } else { n - 1 }, next: NONE, alive: true });
            if n > 0 {
                syms[n - 1].next = n;
            }
        };
        // (unk id, start, end) of a pending unknown run
        let mut unk: Option<(u32, usize, usize)> = None;
        let units: Vec<(usize, usize)> = if self.opts.byte_level {
            (0..piece.len()).map(|i| (i, i + 1)).collect()
        } else {
            piece.char_indices().map(|(i, c)| (i, i + c.len_utf8())).collect()
        };
        let last = units.len().saturating_sub(1);
        let mut key = Vec::new();
        for (k, &(s, e)) in units.iter().enumerate() {
            key.clear();
            if k > 0 {
                if let Some(p) = &self.opts.continuing_prefix {
                    key.extend_from_slice(p.as_bytes());
                }
            }
            key.extend_from_slice(&piece.as_bytes()[s..e]);
            if k == last {
                if let Some(x) = &self.opts.end_of_word_suffix {
                    key.extend_from_slice(x.as_bytes());
                }
            }
            if let Some(&id) = self.vocab.get(&key) {
                if let Some((u, a, z)) = unk.take() {
                    push(&mut syms, u, a, z);
                }
                push(&mut syms, id, s, e);
                continue;
            }
            if let Some(table) = &self.byte_ids {
                let bytes: Option<Vec<u32>> = key.iter().map(|&b| table[b as usize]).collect();
                if let Some(bytes) = bytes {
                    // HF adds each with a length of one byte, from the symbol's start.
                    for (j, id) in bytes.into_iter().enumerate() {
                        let a = (s + j).min(e);
                        push(&mut syms, id, a, (a + 1).min(e).max(a));
                    }
                    continue;
                }
            }
            if let Some(u) = self.opts.unk {
                unk = match unk {
                    Some((u0, a, _)) if self.opts.fuse_unk => Some((u0, a, e)),
                    Some((u0, a, z)) => {
                        push(&mut syms, u0, a, z);
                        Some((u, s, e))
                    }
                    None => Some((u, s, e)),
                };
            }
        }
        if let Some((u, a, z)) = unk {
            push(&mut syms, u, a, z);
        }
        syms
    }

    fn merge(&self, syms: &mut [Sym]) {
        // (rank, position of the left symbol, its id, the right's id): validated when popped.
        let mut heap: BinaryHeap<Reverse<(u32, usize, u32, u32)>> = BinaryHeap::new();
        for i in 0..syms.len().saturating_sub(1) {
            if let Some(&(rank, _)) = self.merges.get(&(syms[i].id, syms[i + 1].id)) {
                heap.push(Reverse((rank, i, syms[i].id, syms[i + 1].id)));
            }
        }
        while let Some(Reverse((_, i, a, b))) = heap.pop() {
            let left = syms[i];
            if !left.alive || left.id != a || left.next == NONE {
                continue;
            }
            let r = left.next;
            if syms[r].id != b {
                continue;
            }
            let Some(&(_, z)) = self.merges.get(&(a, b)) else { continue };
            syms[i].id = z;
            syms[i].end = syms[r].end;
            syms[i].next = syms[r].next;
            syms[r].alive = false;
            if syms[r].next != NONE {
                let n = syms[r].next;
                syms[n].prev = i;
            }
            if syms[i].prev != NONE {
                let p = syms[i].prev;
                if let Some(&(rk, _)) = self.merges.get(&(syms[p].id, z)) {
                    heap.push(Reverse((rk, p, syms[p].id, z)));
                }
            }
            if syms[i].next != NONE {
                let n = syms[i].next;
                if let Some(&(rk, _)) = self.merges.get(&(z, syms[n].id)) {
                    heap.push(Reverse((rk, i, z, syms[n].id)));
                }
            }
        }
    }
}
