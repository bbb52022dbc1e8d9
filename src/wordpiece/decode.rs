//! Decoding WordPiece ids back to text. WordPiece is lossy (normalization, whitespace, [UNK]),
//! so this gives the readable form Hugging Face's WordPiece decoder gives without its
//! punctuation clean-up: pieces joined by spaces, continuation pieces glued to the previous one.

use crate::encode::unknown_id;
use crate::error::CoreError;

/// Decodes `ids` over `vocab` (id order); the first id outside it is the error.
pub fn decode(vocab: &[String], ids: &[u32], prefix: &str) -> Result<String, CoreError> {
    let mut out = String::new();
    for &id in ids {
        let tok = vocab.get(id as usize).ok_or_else(|| unknown_id(id, vocab.len()))?;
        match tok.strip_prefix(prefix) {
            Some(rest) if !prefix.is_empty() && !out.is_empty() => out.push_str(rest),
            _ => {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(tok);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::error::CoreError;

    #[test]
    fn glues_continuations() {
        let v: Vec<String> = ["[UNK]", "un", "##aff", "##able", "is", "."].iter().map(|s| s.to_string()).collect();
        assert_eq!(super::decode(&v, &[1, 2, 3, 4, 5], "##").unwrap(), "unaffable is .");
        assert_eq!(super::decode(&v, &[9], "##"), Err(CoreError::UnknownId { id: 9, bound: 6 }));
    }
}
