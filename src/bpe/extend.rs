//! Continued BPE training: new merges learned on a new corpus on top of a base vocabulary,
//! whose ids, bytes and merges stay exactly as they are.
//!
//! 1. alphabet: every id below the base's bound is a symbol with its bytes; special tokens and
//!    unused ids are symbols with no bytes, which never occur in a word (so nothing can merge
//!    into or with them);
//! 2. words: each counted piece segmented by the base encoder itself (`Encode::segment_piece`:
//!    tiktoken's rank rule for byte-level, the merge table for character-level), cut at
//!    special tokens (a character the base does not know becomes its unknown token, a wall);
//! 3. merge: the ordinary merge loop (`train.rs`, same tie rule) from those words, so new
//!    tokens get ids from the base's bound upward and new merges rank after the base's.
//!
//! Keeping a text's encoding: a new token can change how a text encodes only if its bytes
//! occur inside one of the text's pieces (byte-level: tiktoken's rule only ever makes a token
//! out of bytes of the piece; character-level: a merge's result spells part of the word and its
//! end-of-word symbol). So with `keep` (the text's distinct pieces), every candidate whose bytes
//! are a substring of one of them is refused, and the text's ids are the base's by
//! construction; the merge loop takes the next best pair instead.

use std::time::Instant;

use rustc_hash::FxHashSet;

use super::train::{train_refusing, Merge, TrainConfig, Words};
use crate::count::Counts;
use crate::encode::Tokenizer;
use crate::error::CoreError;

pub struct ExtendConfig {
    /// New tokens to learn at most.
    pub max_new: usize,
    pub min_frequency: u64,
    /// Never make a token longer than this many bytes (0: no limit).
    pub max_token_bytes: usize,
    /// Pieces of a text whose encoding must not change (see the module's comment).
    pub keep: Vec<Vec<u8>>,
    /// Ids the base has retired (a PickyBPE removal, `drop-residues --refill`): symbols with no
    /// bytes, like unused ids, and no new token may spell one again (it would bring it back).
    pub retired: Vec<u32>,
    /// Byte strings no new token may spell (`drop-residues --rejudge`: refill tokens its judge
    /// turned away, learned again without them); like a retired id's bytes.
    pub refused: Vec<Vec<u8>>,
}

/// Substrings up to this many bytes are looked up in a set; longer candidates are searched
/// for in the kept pieces themselves (rare: few new tokens are this long).
const SHORT: usize = 48;

/// Whether a candidate token's bytes occur in one of the kept pieces.
struct Kept<'a> {
    short: FxHashSet<&'a [u8]>,
    pieces: &'a [Vec<u8>],
}

impl<'a> Kept<'a> {
    fn new(pieces: &'a [Vec<u8>]) -> Kept<'a> {
        let mut short = FxHashSet::default();
        for p in pieces {
            for i in 0..p.len() {
                for j in i + 2..=(i + SHORT).min(p.len()) {
                    short.insert(&p[i..j]);
                }
            }
        }
        Kept { short, pieces }
    }

    fn contains(&self, t: &[u8]) -> bool {
        if t.len() <= SHORT {
            return self.short.contains(t);
        }
        self.pieces.iter().any(|p| p.len() >= t.len() && p.windows(t.len()).any(|w| w == t))
    }
}

pub struct ExtendOutput {
    /// The base's id bound: new tokens are ids `first_new..`.
    pub first_new: usize,
    /// Bytes of the new tokens, in id order.
    pub new_tokens: Vec<Vec<u8>>,
    /// The new merges, in rank order (their ids are the extended vocabulary's).
    pub merges: Vec<Merge>,
    /// Uses of every id (base and new) in the segmentation of the new corpus.
    pub token_counts: Vec<u64>,
    pub distinct_pieces: usize,
    pub merge_seconds: f64,
}

/// Learns up to `cfg.max_new` merges on `counts` after `base`'s own segmentation.
pub fn extend(
    base: &Tokenizer,
    counts: &Counts,
    cfg: &ExtendConfig,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<ExtendOutput, CoreError> {
    let t0 = Instant::now();
    // 1. alphabet
    let bound = base.id_bound();
    let specials: Vec<u32> = base.specials().into_iter().map(|(_, id)| id).collect();
    let mut wall = vec![false; bound];
    let alphabet: Vec<Vec<u8>> = (0..bound as u32)
        .map(|id| match base.token_bytes(id) {
            Ok(b) if !specials.contains(&id) && !cfg.retired.contains(&id) => b.to_vec(),
            _ => {
                wall[id as usize] = true;
                Vec::new()
            }
        })
        .collect();
    // 2. words
    let mut words = Words::default();
    let mut ids = Vec::new();
    for (piece, count) in counts.iter() {
        ids.clear();
        base.segment_piece(piece, &mut ids)?;
        for run in ids.split(|&id| (id as usize) >= bound || wall[id as usize]) {
            if !run.is_empty() {
                words.push(run.iter().copied(), count);
            }
        }
    }
    // 3. merge
    let tc = TrainConfig {
        target_tokens: bound + cfg.max_new,
        min_frequency: cfg.min_frequency,
        max_token_bytes: cfg.max_token_bytes,
        snapshots: vec![],
    };
    let kept = Kept::new(&cfg.keep);
    let retired: FxHashSet<&[u8]> = cfg.retired.iter().filter_map(|&id| base.token_bytes(id).ok()).collect();
    let mut retired: FxHashSet<&[u8]> = retired;
    retired.extend(cfg.refused.iter().map(|b| b.as_slice()));
    let refused = |t: &[u8]| kept.contains(t) || retired.contains(t);
    let mut out = train_refusing(alphabet, words, &tc, &refused, &mut |done, total| progress("merge", done, total))?;
    let new_tokens = out.tokens.split_off(bound);
    Ok(ExtendOutput {
        first_new: bound,
        new_tokens,
        merges: out.merges,
        token_counts: out.token_counts,
        distinct_pieces: counts.len(),
        merge_seconds: t0.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::RankEncoder;
    use crate::count::{count_inputs, Splitting};
    use crate::pretok::{Splitter, GPT2};

    #[test]
    fn new_merges_follow_the_base_and_keep_its_ids() {
        // A base of the 256 bytes (in reverse order, as ids), "he", and a special at 258.
        let mut toks: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (255 - b as u32, vec![b])).collect();
        toks.push((256, b"he".to_vec()));
        let specials = vec![("<|end|>".to_string(), 258)];
        let enc = RankEncoder::new(toks, specials.clone(), Splitter::new(GPT2).unwrap()).unwrap();
        let base = Tokenizer::new(Box::new(enc), specials);
        let counts =
            count_inputs(&[b"the the the tea\n".as_slice()], Splitting::Pieces(Splitter::new(GPT2).unwrap())).unwrap();
        let out = extend(
            &base,
            &counts,
            &ExtendConfig {
                max_new: 2,
                min_frequency: 0,
                max_token_bytes: 0,
                keep: vec![],
                retired: vec![],
                refused: vec![],
            },
            &mut |_, _, _| true,
        )
        .unwrap();
        assert_eq!(out.first_new, 259);
        // Base segmentation: "the" = t|he, " the" = ' '|t|he (twice), " tea" = ' '|t|e|a. ' '+t and
        // t+he both occur 3 times; ' ' < 't' goes first. Then " t"+he (2).
        assert_eq!(out.new_tokens, vec![b" t".to_vec(), b" the".to_vec()]);
        assert_eq!(
            (out.merges[0].left, out.merges[0].right, out.merges[0].result),
            (255 - b' ' as u32, 255 - b't' as u32, 259)
        );
        assert_eq!((out.merges[1].left, out.merges[1].right, out.merges[1].result), (259, 256, 260));
        // Keeping " the": " t", "the" and " the" lie inside it and are refused; "te" and "ea" remain.
        let cfg = ExtendConfig {
            max_new: 2,
            min_frequency: 0,
            max_token_bytes: 0,
            keep: vec![b" the".to_vec()],
            retired: vec![],
            refused: vec![],
        };
        let out = extend(&base, &counts, &cfg, &mut |_, _, _| true).unwrap();
        assert!(out.new_tokens.iter().all(|t| !b" the".windows(t.len()).any(|w| w == t.as_slice())));
    }

    /// One new token at most, nothing kept, the given ids retired and byte strings refused.
    fn one_new(retired: Vec<u32>, refused: Vec<Vec<u8>>) -> ExtendConfig {
        ExtendConfig { max_new: 1, min_frequency: 0, max_token_bytes: 0, keep: vec![], retired, refused }
    }

    #[test]
    fn after_a_removal_new_merges_never_spell_the_removed_token() {
        use crate::bpe::PickyEncoder;
        // 256 "ab" (a+b), 257 "abc" (ab+c); "ab" removed for good after merge rank 1.
        let mut toks: Vec<(u32, Vec<u8>, bool)> = (0..=255u8).map(|b| (b as u32, vec![b], false)).collect();
        toks.push((256, b"ab".to_vec(), true));
        toks.push((257, b"abc".to_vec(), false));
        let tokens = toks.iter().map(|(i, b, g)| (*i, &b[..], *g)).collect();
        let merges = [(b'a' as u32, b'b' as u32, 256), (256, b'c' as u32, 257)];
        let enc = PickyEncoder::new(tokens, &merges, &[(1, 256)], Splitter::new(GPT2).unwrap()).unwrap();
        let base = Tokenizer::new(Box::new(enc), vec![]);
        let counts =
            count_inputs(&[b"ab ab ab abc".as_slice()], Splitting::Pieces(Splitter::new(GPT2).unwrap())).unwrap();
        // The removal's segmentation: "ab" = a|b, " ab" = ' '|a|b (twice), " abc" = ' '|abc. a+b (3)
        // would spell the removed "ab": refused, so ' '+a (2) is the first new merge, at id 258.
        let cfg = one_new(vec![256], vec![]);
        let out = extend(&base, &counts, &cfg, &mut |_, _, _| true).unwrap();
        assert_eq!(out.new_tokens, vec![b" a".to_vec()]);
        assert_eq!((out.merges[0].left, out.merges[0].right, out.merges[0].result), (b' ' as u32, b'a' as u32, 258));
        // Not retired, the same pair brings the removed id back (an existing token's bytes are reused).
        let cfg = one_new(vec![], vec![]);
        let out = extend(&base, &counts, &cfg, &mut |_, _, _| true).unwrap();
        assert_eq!((out.merges[0].left, out.merges[0].right, out.merges[0].result), (b'a' as u32, b'b' as u32, 256));
        // Refusing " a" as well (bytes no base token has): the next pair, ' '+abc (1), is learned.
        let cfg = one_new(vec![256], vec![b" a".to_vec()]);
        let out = extend(&base, &counts, &cfg, &mut |_, _, _| true).unwrap();
        assert_eq!(out.new_tokens, vec![b" abc".to_vec()]);
    }
}
