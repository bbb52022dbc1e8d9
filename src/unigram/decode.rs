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
