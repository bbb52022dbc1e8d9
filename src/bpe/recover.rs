//! Recovering the merge list of a byte-level rank map. A `.tiktoken` file holds ranks but no
//! merges; the merge that made a token is found by merging its bytes with the ranks below its
//! own (tiktoken's rule, `RankEncoder`): a token that ends in exactly two parts was made by
//! merging those two. Tokens that do not split in two (possible in hand-made vocabularies)
//! have no merge.

use super::RankEncoder;
use crate::encode::check_id_span;
use crate::error::CoreError;
use crate::pretok::{Splitter, GPT2};

/// (left, right, result) per multi-byte token that a merge of two lower-ranked tokens makes,
/// in rank order. `tokens`: (id = rank, bytes) of the ordinary tokens; an error when they are
/// not a usable byte-level vocabulary (a byte missing, an id or bytes given twice). An empty
/// token (a `.tiktoken` line `= RANK`) is made by no merge.
pub fn merges_from_ranks(tokens: Vec<(u32, Vec<u8>)>) -> Result<Vec<(u32, u32, u32)>, CoreError> {
    check_id_span(tokens.iter().map(|t| t.0).max().unwrap_or(0), tokens.len())?;
    // The pattern plays no part in merging one token's bytes; any valid one will do.
    let encoder = RankEncoder::new(tokens, Vec::new(), Splitter::new(GPT2)?)?;
    let mut out = Vec::new();
    for (id, bytes) in encoder.tokens() {
        if bytes.len() < 2 || encoder.rank(bytes) != Some(id) {
            continue;
        }
        let bounds = encoder.merge_bounds(bytes, id);
        if let [_, mid, _] = bounds[..] {
            if let (Some(left), Some(right)) = (encoder.rank(&bytes[..mid]), encoder.rank(&bytes[mid..])) {
                out.push((left, right, id));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(extra: &[&[u8]]) -> Vec<(u32, Vec<u8>)> {
        let mut tokens: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
        tokens.extend(extra.iter().enumerate().map(|(i, t)| (256 + i as u32, t.to_vec())));
        tokens
    }

    #[test]
    fn each_token_splits_into_the_two_it_was_merged_from() {
        // aa = a+a; aab = aa+b (not a+ab: aa has the lower rank); ab = a+b
        let m = merges_from_ranks(vocab(&[b"aa", b"ab", b"aab"])).unwrap();
        assert_eq!(m, vec![(97, 97, 256), (97, 98, 257), (256, 98, 258)]);
        // "abc" cannot be made from two lower-ranked tokens: no merge
        assert_eq!(merges_from_ranks(vocab(&[b"abc"])).unwrap(), vec![]);
        // nor can an empty token, which changes no other token's merge
        let m = merges_from_ranks(vocab(&[b"aa", b"", b"aab"])).unwrap();
        assert_eq!(m, vec![(97, 97, 256), (256, 98, 258)]);
    }

    #[test]
    fn unusable_vocabularies_are_refused() {
        let mut missing = vocab(&[]);
        missing.remove(7);
        for bad in [missing, vocab(&[b"a"]), vocab(&[b"", b""])] {
            assert!(matches!(merges_from_ranks(bad), Err(CoreError::Input(_))));
        }
        // A rank far past the others would make the encoder's id table gigabytes long.
        let mut gap = vocab(&[]);
        gap.push((u32::MAX - 1, b"xy".to_vec()));
        assert!(matches!(merges_from_ranks(gap), Err(CoreError::Input(_))));
        let mut twice = vocab(&[b"xy"]);
        twice.push((256, b"zz".to_vec()));
        assert!(matches!(merges_from_ranks(twice), Err(CoreError::Input(_))));
    }
}
