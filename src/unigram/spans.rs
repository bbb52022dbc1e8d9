//! SentencePiece's offsets, for Unigram and SentencePiece BPE: each piece spans the input its
//! normalized bytes were made from (`SpNormalizer::normalize_aligned`), as SentencePiece's
//! `PopulateSentencePieceText` sets `begin`/`end`. So the spans tile the text from the first
//! character kept: whitespace a collapse dropped belongs to the piece before it, the dummy `▁`
//! is empty at the first character (or spans leading whitespace it stands for), an unknown
//! piece spans the run of characters it replaced, and of the byte pieces of one character
//! the last spans the character and the others are empty where it starts.

use super::PieceKind;
use crate::encode::Encode;
use crate::error::CoreError;
use crate::normalize::SpNormalizer;

/// What `sp_spans` needs of an encoder.
pub trait SpPieces {
    /// The piece text and kind of `id`.
    fn piece_of(&self, id: u32) -> (&str, PieceKind);
}

/// `Encode::encode_spans` of a SentencePiece-style encoder: its ids of `text`, then their spans
/// (`sp_spans`); `false` (nothing appended) when they do not apply.
pub fn sp_encode_spans(
    encoder: &dyn Encode,
    norm: &SpNormalizer,
    pieces: &dyn SpPieces,
    text: &str,
    ids: &mut Vec<u32>,
    spans: &mut Vec<(usize, usize)>,
) -> Result<bool, CoreError> {
    let mark = ids.len();
    encoder.encode_into(text, ids)?;
    if sp_spans(norm, pieces, text, &ids[mark..], spans) {
        return Ok(true);
    }
    ids.truncate(mark);
    Ok(false)
}

/// Appends the span in `text` of each of `ids` (its encoding, as the encoder gave it) to
/// `spans`; `false` (nothing appended) when the pieces do not spell the normalized text, so
/// that the caller falls back to the generic rule.
pub fn sp_spans(
    norm: &SpNormalizer,
    pieces: &dyn SpPieces,
    text: &str,
    ids: &[u32],
    spans: &mut Vec<(usize, usize)>,
) -> bool {
    let (seen, map) = norm.normalize_aligned(text);
    if seen != norm.normalize(text) {
        return false;
    }
    let mark = spans.len();
    let ok = walk(&seen, &map, pieces, ids, spans, norm.escape_whitespaces);
    if !ok {
        spans.truncate(mark);
    }
    ok
}

/// The walk of `sp_spans` over the normalized text `seen`.
fn walk(
    seen: &str,
    map: &[usize],
    pieces: &dyn SpPieces,
    ids: &[u32],
    spans: &mut Vec<(usize, usize)>,
    escaped: bool,
) -> bool {
    let s = seen.as_bytes();
    let mut pos = 0;
    // The character that byte pieces are spelling: (its start, its end) in `seen`.
    let mut char_span = (0, 0);
    for (k, &id) in ids.iter().enumerate() {
        let (piece, kind) = pieces.piece_of(id);
        match kind {
            PieceKind::Byte => {
                if pos >= s.len() {
                    return false;
                }
                if pos >= char_span.1 {
                    let len = seen[pos..].chars().next().map_or(1, char::len_utf8);
                    char_span = (pos, pos + len);
                }
                pos += 1;
                let end = if pos == char_span.1 { map[pos] } else { map[char_span.0] };
                spans.push((map[char_span.0], end));
            }
            PieceKind::Control => spans.push((map[pos], map[pos])),
            PieceKind::Unknown => {
                // The run of unknown characters ends where the next piece's text is found
                // (known pieces are never made of unknown characters), or at the end.
                let next = ids.get(k + 1).map(|&n| pieces.piece_of(n));
                let mut end = pos + seen[pos..].chars().next().map_or(0, char::len_utf8);
                if let Some((text, kind)) = next {
                    let known = !matches!(kind, PieceKind::Byte | PieceKind::Control | PieceKind::Unknown);
                    while end < s.len() && !(known && spells(&s[end..], text, escaped)) {
                        end += seen[end..].chars().next().map_or(1, char::len_utf8);
                    }
                } else {
                    end = s.len();
                }
                if end > s.len() {
                    return false;
                }
                spans.push((map[pos], map[end]));
                pos = end;
            }
            _ => {
                if !spells(&s[pos..], piece, escaped) {
                    return false;
                }
                let end = pos + spelled_len(piece, escaped);
                spans.push((map[pos], map[end]));
                pos = end;
            }
        }
    }
    pos == s.len()
}

/// Whether `at` starts with `piece` (its `▁` written as a space when spaces are not escaped).
fn spells(at: &[u8], piece: &str, escaped: bool) -> bool {
    if escaped {
        return at.starts_with(piece.as_bytes());
    }
    let mut i = 0;
    for c in piece.chars() {
        let c = if c == crate::normalize::SPACE_MARK { ' ' } else { c };
        let mut buf = [0u8; 4];
        let b = c.encode_utf8(&mut buf).as_bytes();
        if !at[i..].starts_with(b) {
            return false;
        }
        i += b.len();
    }
    true
}

/// The length in the normalized text of `piece`.
fn spelled_len(piece: &str, escaped: bool) -> usize {
    if escaped {
        return piece.len();
    }
    piece.chars().map(|c| if c == crate::normalize::SPACE_MARK { 1 } else { c.len_utf8() }).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Pieces(Vec<(&'static str, PieceKind)>);

    impl SpPieces for Pieces {
        fn piece_of(&self, id: u32) -> (&str, PieceKind) {
            self.0[id as usize]
        }
    }

    #[test]
    fn spans_tile_from_the_first_kept_character() {
        use PieceKind::*;
        let p = Pieces(vec![("<unk>", Unknown), ("\u{2581}a", Normal), ("b", Normal), ("\u{2581}", Normal)]);
        let norm = SpNormalizer { remove_extra_whitespaces: true, ..SpNormalizer::default() };
        let mut spans = Vec::new();
        // "  ab  ??b": leading spaces dropped, the run collapsed into the next ▁, ?? one unknown.
        assert!(sp_spans(&norm, &p, "  ab  ??b", &[1, 2, 3, 0, 2], &mut spans));
        assert_eq!(spans, [(2, 3), (3, 4), (4, 6), (6, 8), (8, 9)]);
        // Pieces that do not spell the text: nothing, the caller falls back.
        spans.clear();
        assert!(!sp_spans(&norm, &p, "ab", &[2, 2], &mut spans));
        assert!(spans.is_empty());
    }
}
