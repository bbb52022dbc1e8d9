//! BPE's merge rule for one pass over keys that are all distinct: the round trip over a
//! corpus's counted pieces (`encode/round_trip.rs`), which encodes every distinct piece once.
//!
//! The encoder (`rank.rs`) keeps each thread's pieces in a cache, which pays when text repeats;
//! in a pass where no piece comes twice every lookup misses and every insert is never read, and
//! the cache's tables (several MB) push the rank table out of the processor's caches. Here a
//! piece is merged by the same rule with nothing remembered: a piece that is a token is its id;
//! otherwise, from single bytes, the adjacent pair whose concatenation has the lowest rank is
//! merged, the leftmost on ties, until no pair is a token. Short pieces run a flat loop on the
//! stack; long ones the encoder's own long-piece merge (`RankEncoder::merge_bounds`).
//!
//! Superword BPE encodes a run as its pieces' stage-1 ids side by side, then the stage-2
//! merges over the run (`superword.rs`): stage 1 never looks past a piece, so a piece's
//! stage-1 ids are the same in every run that holds it and may be reused from run to run (the
//! stage-1 encoder's piece cache does that, and pays here: runs are distinct, their pieces are
//! not: 21 MB of English prose has 806k runs of 3.0M pieces, 105k of them distinct); stage 2
//! depends on the whole run and is applied to each (`run`).

use super::min_tree::NONE;
use super::rank::{FlatParts, HEAP_FROM};
use super::superword::{apply_stage_two_from, for_each_piece, StageTwo};
use super::RankEncoder;
use crate::count::RunPieces;
use crate::error::CoreError;

/// What an encoder offers a pass over distinct counted keys (`Encode::distinct`): the encoder
/// itself, taken apart as far as the pass needs.
pub enum Distinct<'a> {
    /// Byte-level BPE: a key is a piece, merged by the rank rule (`Merger`).
    Pieces(&'a RankEncoder),
    /// Superword BPE: a key is a run (`superword::run_key`); its pieces by the stage-1 encoder,
    /// then the stage-2 merges over the run (`run`); the last is the encoder of every token,
    /// which decodes.
    Runs(&'a RankEncoder, &'a StageTwo, &'a RankEncoder),
}

/// Pieces shorter than this run the flat loop; longer ones `merge_bounds` (the encoder's bound).
const FLAT: usize = HEAP_FROM;

/// The rank rule without the thread's piece cache, with its scratch space (one per task).
pub struct Merger<'a> {
    enc: &'a RankEncoder,
    byte_id: [u32; 256],
    /// The flat loop's arrays (`RankEncoder::merge_flat`), boxed: about 2.5 KB.
    parts: Box<FlatParts>,
}

impl<'a> Merger<'a> {
    pub fn new(enc: &'a RankEncoder) -> Merger<'a> {
        let mut byte_id = [0u32; 256];
        for (b, id) in byte_id.iter_mut().enumerate() {
            // A byte-level encoder has every byte (`RankEncoder::new` refuses one without).
            *id = enc.rank(&[b as u8]).unwrap_or(NONE);
        }
        Merger { enc, byte_id, parts: Box::new(FlatParts::new()) }
    }

    /// Appends the ids of one pre-tokenized piece, as the encoder segments it
    /// (`Encode::segment_piece`).
    pub fn piece(&mut self, piece: &[u8], out: &mut Vec<u32>) {
        let n = piece.len();
        if n == 1 {
            return out.push(self.byte_id[piece[0] as usize]);
        }
        if n == 0 {
            return;
        }
        if let Some(id) = self.enc.rank(piece) {
            return out.push(id);
        }
        if n == 2 {
            out.push(self.byte_id[piece[0] as usize]);
            return out.push(self.byte_id[piece[1] as usize]);
        }
        if n < FLAT {
            return self.flat(piece, out);
        }
        let bounds = self.enc.merge_bounds(piece, NONE);
        // Every part the merge leaves is a token (a single byte or a merge's result).
        out.extend(bounds.windows(2).map(|w| self.enc.rank(&piece[w[0]..w[1]]).unwrap_or(NONE)));
    }

    /// A piece of 3 to FLAT - 1 bytes: the encoder's own flat merge loop on this task's
    /// scratch arrays (`RankEncoder::merge_flat`), its parts' ids in order.
    fn flat(&mut self, piece: &[u8], out: &mut Vec<u32>) {
        let m = self.enc.merge_flat(piece, NONE, &mut self.parts);
        out.extend_from_slice(self.parts.ids(m));
    }
}

/// Whether `a` and `b` hold the same bytes, for the short slices a pass compares millions of
/// times (pieces, tokens): up to 16 bytes as two overlapping words each, no call.
#[inline(always)]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && if a.len() <= 16 { words(a) == words(b) } else { a == b }
}

/// Two words that, with the length, identify a slice of up to 16 bytes (bytes 0..8 and
/// len-8..len, or 0..4 and len-4..len, or the first, middle and last byte); for a longer one,
/// its first and last 8 bytes.
#[inline(always)]
fn words(k: &[u8]) -> (u64, u64) {
    let n = k.len();
    let word = |at: usize| u64::from_le_bytes(k[at..at + 8].try_into().unwrap_or_default());
    let half = |at: usize| u64::from(u32::from_le_bytes(k[at..at + 4].try_into().unwrap_or_default()));
    if n >= 8 {
        (word(0), word(n - 8))
    } else if n >= 4 {
        (half(0) | (half(n - 4) << 32), 0)
    } else if n > 0 {
        ((u64::from(k[0]) << 16) | (u64::from(k[n / 2]) << 8) | u64::from(k[n - 1]), 0)
    } else {
        (0, 0)
    }
}

/// Appends the ids of the superword run counted as `key` and returns its text (as
/// `Encode::segment_counted`), or an error naming a damaged key: its pieces' stage-1 ids by
/// `piece` (the stage-1 encoder's `RankEncoder::with_pieces`, whose cache is what reuses a
/// piece's ids from run to run), side by side, then the stage-2 merges over the run.
pub fn run<'k>(
    piece: &mut dyn FnMut(&[u8], &mut Vec<u32>),
    stage2: &StageTwo,
    key: &'k [u8],
    out: &mut Vec<u32>,
) -> Result<&'k [u8], CoreError> {
    let from = out.len();
    for_each_piece(key, |p| piece(p, out))?;
    apply_stage_two_from(stage2, out, from);
    let semi = key.iter().position(|&c| c == b';').unwrap_or(0); // for_each_piece found it
    Ok(&key[semi + 1..])
}

/// Every distinct piece of a superword corpus's runs as stage 1 segments it, each merged once
/// by the rank rule (`Merger`: no piece comes twice), in parallel tasks of pieces joined in
/// order: the ids of piece `p` are `of(p)`. A run's stage-1 ids are then its pieces' ids side
/// by side, with no lookup by bytes (the superword trainer's stage-2 words, and the round
/// trip over counted runs, `count::RunPieces`).
pub struct PieceSegments {
    flat: Vec<u32>,
    starts: Vec<usize>,
}

/// Distinct pieces per segmenting task.
const TASK_PIECES: usize = if cfg!(test) { 16 } else { 4096 };

impl PieceSegments {
    /// Segments pieces `0..n`, piece `p`'s bytes given by `piece(p)`.
    pub fn new<'p>(stage1: &RankEncoder, n: usize, piece: impl Fn(u32) -> &'p [u8] + Sync) -> PieceSegments {
        use rayon::prelude::*;
        let parts: Vec<(Vec<u32>, Vec<u32>)> = (0..n)
            .step_by(TASK_PIECES)
            .collect::<Vec<usize>>()
            .into_par_iter()
            .map(|a| {
                let mut merger = Merger::new(stage1);
                let (mut flat, mut lens) = (Vec::new(), Vec::with_capacity(TASK_PIECES));
                for p in a..(a + TASK_PIECES).min(n) {
                    let at = flat.len();
                    merger.piece(piece(p as u32), &mut flat);
                    lens.push((flat.len() - at) as u32);
                }
                (flat, lens)
            })
            .collect();
        let mut flat = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
        let mut starts = Vec::with_capacity(n + 1);
        for (ids, lens) in parts {
            let mut at = flat.len();
            for len in lens {
                starts.push(at);
                at += len as usize;
            }
            flat.extend_from_slice(&ids);
        }
        starts.push(flat.len());
        PieceSegments { flat, starts }
    }

    /// The stage-1 ids of piece `p`.
    #[inline]
    pub fn of(&self, p: u32) -> &[u32] {
        let p = p as usize;
        &self.flat[self.starts[p]..self.starts[p + 1]]
    }

    /// Appends the ids of run `k` of `pieces` (its pieces' stage-1 ids side by side, then the
    /// stage-2 merges over the run), as `run` does from its key.
    #[inline]
    pub fn run(&self, pieces: &RunPieces, k: usize, stage2: &StageTwo, out: &mut Vec<u32>) {
        let from = out.len();
        for &p in pieces.run(k) {
            out.extend_from_slice(self.of(p));
        }
        apply_stage_two_from(stage2, out, from);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::rank::tests::encoder;
    use crate::encode::Encode;

    /// The uncached merge gives the cached encoder's ids on pieces of every length and path
    /// (one or two bytes, whole tokens, the flat loop, long pieces, chunked ones), random bytes
    /// and multi-byte characters included.
    #[test]
    fn equals_the_encoder_on_every_path() {
        let e = encoder(&[
            b"aa",
            b"aaaa",
            b"ab",
            b"ba",
            b"aba",
            b"bab",
            b"abab",
            b"bb",
            b"abb",
            b"\xe4\xb8",
            b"\xe4\xb8\xad",
            b"a\xe4",
        ]);
        let mut m = Merger::new(&e);
        let mut rnd = crate::test_data::rng(0x0dd_ba11);
        let alphabet: [&[u8]; 5] = [b"a", b"b", "中".as_bytes(), b"\xe4", b"\xff"];
        for len in [1usize, 2, 3, 4, 9, 40, 126, 127, 128, 129, 300, 9000] {
            for round in 0..30 {
                let mut piece = Vec::new();
                while piece.len() < len {
                    if round % 3 == 0 {
                        piece.push(rnd(256) as u8);
                    } else {
                        piece.extend_from_slice(alphabet[rnd(alphabet.len() as u64) as usize]);
                    }
                }
                piece.truncate(len);
                let (mut want, mut got) = (vec![], vec![7]);
                e.segment_piece(&piece, &mut want).unwrap();
                m.piece(&piece, &mut got);
                assert_eq!(got[0], 7, "earlier ids are kept");
                assert_eq!(got[1..], want[..], "len {len}, round {round}");
            }
        }
    }
}
