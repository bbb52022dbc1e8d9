//! tiktoken's byte-level BPE encoder over a rank map.
//!
//! Rule (identical to tiktoken's): pre-tokenize; a piece that is itself a token is one id;
//! otherwise start from single bytes and repeatedly merge the adjacent pair whose
//! concatenation has the lowest rank, the leftmost on ties, until no pair is a token.
//! A token's rank is its id. Trained and imported vocabularies share this encoder.
//!
//! Cost: short pieces use a flat scan (cheapest for the usual 2–20 bytes). Long pieces keep
//! their pair ranks in a block-min tree over a linked list of parts, so a piece of n bytes costs
//! O(n log n) with a log that stays in cache, instead of tiktoken's O(n²): ten megabytes of one
//! repeated character cost the same per byte as a hundred kilobytes.

use super::min_tree::{MinTree, NONE};
use super::piece_cache::{self, PieceCache};
use super::rank_table::RankTable;
use crate::encode::{unknown_id, Encode, Kind};
use crate::error::CoreError;
use crate::pretok::Splitter;

/// Pieces at least this long take the `MinTree` path.
const HEAP_FROM: usize = 128;

pub struct RankEncoder {
    ranks: RankTable,
    /// the id of each single byte (where every merge loop starts)
    byte_id: [u32; 256],
    /// id -> bytes, for ordinary and special tokens (None for ids that are unused)
    decoder: Vec<Option<Vec<u8>>>,
    splitter: Splitter,
    /// tells this encoder's entries in a thread's piece cache from another encoder's
    uid: u64,
}

static NEXT_UID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl RankEncoder {
    /// `tokens`: (id, bytes) of the ordinary tokens; every single byte must be one of them.
    /// `specials`: (text, id) of the special tokens, which this encoder only decodes (the
    /// special-token rule is `encode::Specials`, in front of every encoder).
    pub fn new(
        tokens: Vec<(u32, Vec<u8>)>,
        specials: Vec<(String, u32)>,
        splitter: Splitter,
    ) -> Result<Self, CoreError> {
        let max_id = tokens.iter().map(|t| t.0).chain(specials.iter().map(|s| s.1)).max().unwrap_or(0);
        let mut decoder: Vec<Option<Vec<u8>>> = vec![None; max_id as usize + 1];
        let mut ranks = RankTable::with_capacity(tokens.len());
        for (id, bytes) in tokens {
            if decoder[id as usize].is_some() {
                return Err(CoreError::input(format!("token id {id} appears twice; give every token its own id")));
            }
            if bytes.is_empty() {
                return Err(CoreError::input(format!("token {id} is empty; remove it")));
            }
            if !ranks.insert(&bytes, id) {
                return Err(CoreError::input(format!(
                    "two tokens have the bytes of token {id} ({:?}); keep one",
                    String::from_utf8_lossy(&bytes)
                )));
            }
            decoder[id as usize] = Some(bytes);
        }
        let mut byte_id = [0u32; 256];
        for (b, slot) in byte_id.iter_mut().enumerate() {
            *slot = ranks.get(&[b as u8]).ok_or_else(|| {
                CoreError::input(format!(
                    "byte 0x{b:02x} has no token, and a byte-level vocabulary needs all 256 bytes; add it"
                ))
            })?;
        }
        for (s, id) in &specials {
            if decoder[*id as usize].is_some() {
                return Err(CoreError::input(format!(
                    "special token {s:?} has id {id}, which another token already has; give it a free id"
                )));
            }
            decoder[*id as usize] = Some(s.as_bytes().to_vec());
        }
        let uid = NEXT_UID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(RankEncoder { ranks, byte_id, decoder, splitter, uid })
    }

    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        self.ranks.get(bytes)
    }

    /// (id, bytes) of every token, ordinary and special, by id.
    pub fn tokens(&self) -> impl Iterator<Item = (u32, &[u8])> {
        self.decoder.iter().enumerate().filter_map(|(id, b)| b.as_deref().map(|b| (id as u32, b)))
    }

    /// Encodes text with no special-token handling (tiktoken's `encode_ordinary`).
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>, CoreError> {
        let mut out = Vec::new();
        self.encode_into(text, &mut out)?;
        Ok(out)
    }

    /// Appends the ids of one pre-tokenized piece.
    #[inline]
    fn encode_piece(&self, piece: &[u8], parts: &mut FlatParts, cache: &mut PieceCache, out: &mut Vec<u32>) {
        if let Some(id) = self.ranks.get(piece) {
            out.push(id);
            return;
        }
        if piece.len() < HEAP_FROM {
            let Err(slot) = cache.get(piece, out) else { return };
            let m = self.merge_flat(piece, NONE, parts);
            cache.insert(slot, piece, &parts.ids[..m]);
            out.extend_from_slice(&parts.ids[..m]);
        } else {
            let (_, ids) = self.merge_long(piece, NONE);
            out.extend_from_slice(&ids);
        }
    }

    /// Part boundaries (0 = first, piece.len() = last) after merging with ranks < `max_rank`.
    pub(crate) fn merge_bounds(&self, piece: &[u8], max_rank: u32) -> Vec<usize> {
        let starts: Vec<u32> = if piece.is_empty() {
            vec![]
        } else if piece.len() < HEAP_FROM {
            let mut parts = FlatParts::new();
            let m = self.merge_flat(piece, max_rank, &mut parts);
            parts.starts[..m].to_vec()
        } else {
            self.merge_long(piece, max_rank).0
        };
        starts.into_iter().map(|s| s as usize).chain(std::iter::once(piece.len())).collect()
    }

    #[inline(always)]
    fn pair_rank(&self, piece: &[u8], a: u32, b: u32, max_rank: u32) -> u32 {
        match self.ranks.get(&piece[a as usize..b as usize]) {
            Some(r) if r < max_rank => r,
            _ => NONE,
        }
    }

    /// tiktoken's loop for short pieces, on three arrays on the stack (no allocation):
    /// `ranks[k]` is the rank of parts k and k+1 joined. Each step finds the lowest rank (the
    /// first index holding it: leftmost on ties) with two passes over a `u32` array that the
    /// compiler vectorizes, then closes the gap with `copy_within`. Quadratic in the piece
    /// length, which is why it is used only below `HEAP_FROM` bytes.
    /// Returns the number of parts m; `parts.starts[..m]` and `parts.ids[..m]` describe them.
    fn merge_flat(&self, piece: &[u8], max_rank: u32, parts: &mut FlatParts) -> usize {
        let n = piece.len();
        debug_assert!(n > 0 && n < HEAP_FROM);
        let FlatParts { starts, ids, ranks } = parts;
        for (i, &b) in piece.iter().enumerate() {
            starts[i] = i as u32;
            ids[i] = self.byte_id[b as usize];
        }
        starts[n] = n as u32;
        for (i, r) in ranks[..n - 1].iter_mut().enumerate() {
            *r = self.pair_rank(piece, i as u32, i as u32 + 2, max_rank);
        }
        ranks[n - 1] = NONE;
        let mut m = n;
        while m > 1 {
            let live = &ranks[..m - 1];
            let best = live.iter().copied().min().unwrap_or(NONE);
            if best == NONE {
                break;
            }
            let i = live.iter().position(|&r| r == best).unwrap_or(0);
            // Part i absorbs part i+1; the pair ranks right of the gap move down by one.
            ids[i] = best;
            starts.copy_within(i + 2..=m, i + 1);
            ids.copy_within(i + 2..m, i + 1);
            ranks.copy_within(i + 1..m - 1, i);
            m -= 1;
            ranks[i] = if i + 1 < m { self.pair_rank(piece, starts[i], starts[i + 2], max_rank) } else { NONE };
            if i > 0 {
                ranks[i - 1] = self.pair_rank(piece, starts[i - 1], starts[i + 1], max_rank);
            }
        }
        m
    }

    /// The same merges for long pieces, in time linear in practice: parts form a linked list
    /// indexed by their start byte, and `rank[start]` (the rank of that part joined with the
    /// next) lives in a `MinTree`, whose minimum is the lowest rank, leftmost on ties: exactly
    /// the flat loop's choice. Each merge changes three slots. See `min_tree.rs` for why not a heap.
    /// Returns the starts and token ids of the final parts.
    fn merge_long(&self, piece: &[u8], max_rank: u32) -> (Vec<u32>, Vec<u32>) {
        let n = piece.len() as u32;
        let end = n;
        // next[i]: start of the part after the part starting at i (n at the end);
        // prev[i]: start of the part before (NONE for the first).
        let mut next: Vec<u32> = (1..=n).collect();
        let mut prev: Vec<u32> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut id: Vec<u32> = piece.iter().map(|&b| self.byte_id[b as usize]).collect();
        let rank: Vec<u32> =
            (0..n).map(|i| if i + 1 < n { self.pair_rank(piece, i, i + 2, max_rank) } else { NONE }).collect();
        let mut tree = MinTree::new(rank);
        while let Some((r, i)) = tree.min() {
            // Part i absorbs part j = next[i].
            let i = i as u32;
            let j = next[i as usize];
            tree.set(j as usize, NONE);
            id[i as usize] = r;
            let k = next[j as usize];
            next[i as usize] = k;
            if k < end {
                prev[k as usize] = i;
            }
            let ri = if k < end { self.pair_rank(piece, i, next[k as usize], max_rank) } else { NONE };
            tree.set(i as usize, ri);
            let p = prev[i as usize];
            if p != NONE {
                tree.set(p as usize, self.pair_rank(piece, p, k, max_rank));
            }
        }
        let (mut starts, mut ids) = (Vec::new(), Vec::new());
        let mut i = 0;
        while i < end {
            starts.push(i);
            ids.push(id[i as usize]);
            i = next[i as usize];
        }
        (starts, ids)
    }
}

impl Encode for RankEncoder {
    fn kind(&self) -> Kind {
        Kind::ByteBpe
    }

    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        if text.len() >= NONE as usize {
            return Err(CoreError::input("a text of 4 GiB or more cannot be encoded in one call; split it"));
        }
        // About one id per three bytes of prose; a batch's flat buffer grows only when short.
        out.reserve(text.len() / 3);
        let bytes = text.as_bytes();
        // One scratch area for every short piece of this call.
        let mut parts = FlatParts::new();
        piece_cache::with_cache(self.uid, |cache| {
            self.splitter.split(text, |a, b| self.encode_piece(&bytes[a..b], &mut parts, cache, out))
        })
    }

    fn segment_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), CoreError> {
        let mut parts = FlatParts::new();
        piece_cache::with_cache(self.uid, |cache| self.encode_piece(piece, &mut parts, cache, out));
        Ok(())
    }

    /// The tokens' bytes, concatenated (special tokens as their text).
    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, CoreError> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            out.extend_from_slice(self.token_bytes(id).ok_or_else(|| unknown_id(id, self.id_bound()))?);
        }
        Ok(out)
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.decoder.get(id as usize).and_then(|d| d.as_deref())
    }

    fn concatenates(&self) -> bool {
        true
    }

    fn vocab_size(&self) -> usize {
        self.decoder.iter().filter(|d| d.is_some()).count()
    }

    /// One more than the largest id (ordinary or special).
    fn id_bound(&self) -> usize {
        self.decoder.len()
    }
}

/// Scratch space for merging a short piece, on the stack and reused for every piece of a
/// call: `starts[k]` is part k's first byte (one extra entry holds the piece's end), `ids[k]`
/// its token id, `ranks[k]` the rank of parts k and k+1 joined.
struct FlatParts {
    starts: [u32; HEAP_FROM + 1],
    ids: [u32; HEAP_FROM],
    ranks: [u32; HEAP_FROM],
}

impl FlatParts {
    fn new() -> FlatParts {
        FlatParts { starts: [0; HEAP_FROM + 1], ids: [0; HEAP_FROM], ranks: [NONE; HEAP_FROM] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::GPT2;

    fn encoder(extra: &[&[u8]]) -> RankEncoder {
        let mut tokens: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
        for (i, t) in extra.iter().enumerate() {
            tokens.push((256 + i as u32, t.to_vec()));
        }
        RankEncoder::new(tokens, vec![("<|end|>".into(), 1000)], Splitter::new(GPT2).unwrap()).unwrap()
    }

    #[test]
    fn lowest_rank_first_leftmost_on_ties() {
        let e = encoder(&[b"aa", b"ab", b"aab"]);
        // "aab": pairs aa(256) ab(257) -> aa first -> [aa, b] -> aab(258)
        assert_eq!(e.encode_ordinary("aab").unwrap(), vec![258]);
        // "aaa": aa at 0 and 1, leftmost wins -> [aa, a]
        assert_eq!(e.encode_ordinary("aaa").unwrap(), vec![256, 97]);
    }

    /// tiktoken's rule written as plainly as possible: a list of parts; join the adjacent pair
    /// whose bytes have the lowest rank, the leftmost on ties, until none is a token.
    fn naive_starts(e: &RankEncoder, piece: &[u8]) -> Vec<u32> {
        let mut parts: Vec<usize> = (0..=piece.len()).collect();
        loop {
            let best = (0..parts.len().saturating_sub(2))
                .filter_map(|k| e.rank(&piece[parts[k]..parts[k + 2]]).map(|r| (r, k)))
                .min();
            match best {
                Some((_, k)) => {
                    parts.remove(k + 1);
                }
                None => break,
            }
        }
        parts.pop();
        parts.into_iter().map(|p| p as u32).collect()
    }

    #[test]
    fn long_path_and_flat_path_equal_the_plain_rule() {
        let e = encoder(&[b"aa", b"aaaa", b"ab", b"ba", b"aba", b"bab", b"abab", b"bb", b"abb"]);
        let mut seed = 0x9e3779b97f4a7c15u64;
        for len in [1usize, 2, 3, 7, 40, 127, 128, 130, 200, 517] {
            for _ in 0..50 {
                let piece: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        if seed % 3 == 0 {
                            b'b'
                        } else {
                            b'a'
                        }
                    })
                    .collect();
                let want = naive_starts(&e, &piece);
                let (long, ids) = e.merge_long(&piece, NONE);
                assert_eq!(long, want, "long, len {len}");
                let bounds: Vec<usize> = want.iter().map(|&s| s as usize).chain([len]).collect();
                let want_ids: Vec<u32> = bounds.windows(2).map(|w| e.rank(&piece[w[0]..w[1]]).unwrap()).collect();
                assert_eq!(ids, want_ids);
                if len < HEAP_FROM {
                    let mut parts = FlatParts::new();
                    let m = e.merge_flat(&piece, NONE, &mut parts);
                    assert_eq!(&parts.starts[..m], &want[..], "flat, len {len}");
                    assert_eq!(&parts.ids[..m], &want_ids[..]);
                }
                assert_eq!(e.merge_bounds(&piece, NONE), bounds);
                for _ in 0..2 {
                    // the second time from the piece cache
                    let mut out = vec![];
                    piece_cache::with_cache(e.uid, |c| e.encode_piece(&piece, &mut FlatParts::new(), c, &mut out));
                    assert_eq!(out, want_ids);
                }
            }
        }
    }

    #[test]
    fn decodes_specials_and_refuses_unknown_ids() {
        let e = encoder(&[]);
        assert_eq!(e.decode_bytes(&[97, 1000]).unwrap(), b"a<|end|>");
        assert_eq!(e.decode_bytes(&[5000]), Err(CoreError::UnknownId { id: 5000, bound: 1001 }));
        assert_eq!((e.vocab_size(), e.id_bound()), (257, 1001));
    }
}
