//! SentencePiece's decoding, for Unigram and SentencePiece BPE: piece texts with `▁` back to
//! spaces and the dummy prefix dropped at the start (`SpNormalizer::restore_at`), the unknown
//! piece written as the model's `unk_surface` (SentencePiece's `TrainerSpec.unk_surface`,
//! default ` ⁇ `), then the denormalizer.
//!
//! As in SentencePiece's `Decode`, the surface is written as it is: its spaces are not a dummy
//! prefix, and text after it is no longer at the start (so `[unk, ▁a]` is ` ⁇  a`).

use crate::normalize::SpNormalizer;

/// SentencePiece's default `unk_surface`: U+2047 between spaces.
pub const DEFAULT_UNK_SURFACE: &str = " \u{2047} ";

/// Decodes `ids` (all known ids): `pieces` gives the concatenated piece bytes of a run of ids
/// (byte pieces as bytes, control pieces nothing), `unk_id` is the unknown piece.
pub fn sp_decode(
    norm: &SpNormalizer,
    ids: &[u32],
    unk_id: u32,
    unk_surface: &str,
    pieces: impl Fn(&[u32]) -> Vec<u8>,
) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, run) in ids.split(|&id| id == unk_id).enumerate() {
        if k > 0 {
            out.extend_from_slice(unk_surface.as_bytes());
        }
        let restored = norm.restore_at(&pieces(run), out.is_empty());
        out.extend_from_slice(&restored);
    }
    norm.denormalize(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces as texts: id k is `texts[k]`, id 0 the unknown piece.
    fn run(norm: &SpNormalizer, ids: &[u32], surface: &str) -> String {
        let texts = ["<unk>", "\u{2581}a", "b", "\u{2581}"];
        let pieces = |run: &[u32]| run.iter().flat_map(|&i| texts[i as usize].bytes()).collect::<Vec<u8>>();
        String::from_utf8(sp_decode(norm, ids, 0, surface, pieces)).unwrap()
    }

    #[test]
    fn the_unknown_piece_is_its_surface_as_it_is() {
        let n = SpNormalizer::default();
        assert_eq!(run(&n, &[1, 2], DEFAULT_UNK_SURFACE), "ab");
        // The surface keeps its spaces at the start; text after it is no longer at the start.
        assert_eq!(run(&n, &[0, 1], DEFAULT_UNK_SURFACE), " \u{2047}  a");
        assert_eq!(run(&n, &[1, 0, 2], "<?>"), "a<?>b");
        assert_eq!(run(&n, &[3, 0], DEFAULT_UNK_SURFACE), " \u{2047} ");
    }
}
