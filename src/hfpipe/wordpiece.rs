//! Hugging Face's WordPiece model (tokenizers' `models/wordpiece/mod.rs`) over one
//! pre-tokenized piece: a piece of more than `max_input_chars_per_word` characters is the
//! unknown token; otherwise the longest token that starts the rest of the piece is taken, again
//! and again (`continuing_subword_prefix` in front of all but the first), and when some rest has
//! no token the whole piece is the unknown token.

use rustc_hash::FxHashMap;

pub struct Model {
    vocab: FxHashMap<String, u32>,
    unk: u32,
    prefix: String,
    max_chars: usize,
}

impl Model {
    pub fn new(tokens: &[(u32, String)], unk: u32, prefix: String, max_chars: usize) -> Model {
        let vocab = tokens.iter().map(|(i, t)| (t.clone(), *i)).collect();
        Model { vocab, unk, prefix, max_chars }
    }

    /// Appends (id, start, end) of the piece's tokens.
    pub fn encode(&self, piece: &str, out: &mut Vec<(u32, usize, usize)>) {
        if piece.is_empty() {
            return;
        }
        if piece.chars().count() > self.max_chars {
            out.push((self.unk, 0, piece.len()));
            return;
        }
        let first = out.len();
        let mut start = 0;
        let mut key = String::new();
        while start < piece.len() {
            let mut end = piece.len();
            let mut found = None;
            while start < end {
                key.clear();
                if start > 0 {
                    key.push_str(&self.prefix);
                }
                key.push_str(&piece[start..end]);
                if let Some(&id) = self.vocab.get(&key) {
                    found = Some(id);
                    break;
                }
                end -= piece[start..end].chars().last().map_or(1, char::len_utf8);
            }
            match found {
                Some(id) => out.push((id, start, end)),
                None => {
                    out.truncate(first);
                    out.push((self.unk, 0, piece.len()));
                    return;
                }
            }
            start = end;
        }
    }
}
