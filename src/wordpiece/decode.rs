//! Decoding WordPiece ids back to text, as Hugging Face's WordPiece decoder does. WordPiece is
//! lossy (normalization, whitespace, [UNK]), so this gives the readable form: pieces joined by
//! spaces, continuation pieces glued to the previous one, and, with `cleanup` (the decoder's
//! setting, BERT's default), the decoder's clean-up of tokenization artifacts.
//!
//! The clean-up works token by token, each token with the space put before it (as the
//! reference's decoder does it, in its order): ` .` `.`, ` ?` `?`, ` !` `!`, ` ,` `,`, ` ' ` `'`,
//! ` n't` `n't`, ` 'm` `'m`, ` do not` ` don't`, ` 's` `'s`, ` 've` `'ve`, ` 're` `'re`. So
//! `1 . 1 .` decodes as `1. 1.`; a rule that spans two tokens never applies.

use std::borrow::Cow;

use crate::encode::unknown_id;
use crate::error::CoreError;

/// The clean-up rules in the order they apply: (from, to).
const CLEANUP: [(&str, &str); 11] = [
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" do not", " don't"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
];

/// One token's text after the clean-up rules (each replaces every occurrence, left to right).
fn clean(token: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(token);
    // Every rule starts with a space: a token without one is left as it is.
    if !token.contains(' ') {
        return out;
    }
    for (from, to) in CLEANUP {
        if out.contains(from) {
            out = Cow::Owned(out.replace(from, to));
        }
    }
    out
}

/// Decodes `ids` over `vocab` (id order); the first id outside it is the error.
pub fn decode(vocab: &[String], ids: &[u32], prefix: &str, cleanup: bool) -> Result<String, CoreError> {
    let mut out = String::new();
    let mut token = String::new();
    for (i, &id) in ids.iter().enumerate() {
        let tok = vocab.get(id as usize).ok_or_else(|| unknown_id(id, vocab.len()))?;
        token.clear();
        match tok.strip_prefix(prefix) {
            Some(rest) if !prefix.is_empty() && i != 0 => token.push_str(rest),
            _ => {
                if i != 0 {
                    token.push(' ');
                }
                token.push_str(tok);
            }
        }
        if cleanup {
            out.push_str(&clean(&token));
        } else {
            out.push_str(&token);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::error::CoreError;

    fn vocab(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn glues_continuations() {
        let v = vocab(&["[UNK]", "un", "##aff", "##able", "is", "."]);
        assert_eq!(super::decode(&v, &[1, 2, 3, 4, 5], "##", false).unwrap(), "unaffable is .");
        assert_eq!(super::decode(&v, &[9], "##", false), Err(CoreError::UnknownId { id: 9, bound: 6 }));
    }

    #[test]
    fn cleanup_is_per_token_with_its_space() {
        let v = vocab(&["1", ".", "'", "s", "##s", "do not", "?"]);
        assert_eq!(super::decode(&v, &[0, 1, 0, 1], "##", true).unwrap(), "1. 1.");
        assert_eq!(super::decode(&v, &[0, 1, 0, 1], "##", false).unwrap(), "1 . 1 .");
        // ` 's` spans two tokens (`'` and `s`): not cleaned; `do not` as one token is.
        assert_eq!(super::decode(&v, &[0, 2, 3, 5, 6], "##", true).unwrap(), "1 ' s don't?");
        // The first token gets no space and so no clean-up; a leading `##` piece is kept whole.
        assert_eq!(super::decode(&v, &[1, 4], "##", true).unwrap(), ".s");
        assert_eq!(super::decode(&v, &[4, 0], "##", true).unwrap(), "##s 1");
    }
}
