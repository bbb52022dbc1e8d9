//! Hugging Face's decoders: a chain of rewrites of the list of token strings, joined at the
//! end (HF's `decode_chain`). Without a decoder, HF joins the tokens with a space.
//!
//! - `Metaspace`: the replacement becomes a space, except in the first token when a prefix
//!   was put in front (`prepend_scheme` other than `never`).
//! - `Replace`: a literal or regex pattern replaced in each token.
//! - `ByteFallback`: runs of `<0xNN>` tokens become their bytes' text, or one U+FFFD per byte
//!   when those bytes are not UTF-8.
//! - `Fuse`: all tokens into one.
//! - `Strip`: up to `start` / `stop` copies of a character off each token's ends.

use super::normalizers::Pattern;
use crate::error::CoreError;

#[derive(Clone, Debug)]
pub enum Step {
    Metaspace {
        replacement: char,
        prefixed: bool,
    },
    Replace(Pattern, String),
    ByteFallback,
    Fuse,
    Strip {
        content: char,
        start: usize,
        stop: usize,
    },
    /// GPT-2's alphabet back to bytes, all tokens as one text (invalid UTF-8 replaced).
    ByteLevel,
    /// A token after the first is joined to the one before when it starts with the prefix
    /// (which goes), else after a space; `cleanup` then glues punctuation and contractions.
    WordPiece {
        prefix: String,
        cleanup: bool,
    },
    /// The suffix becomes a space, except in the last token (CLIP's `</w>`).
    Bpe {
        suffix: String,
    },
}

/// GPT-2's byte-to-unicode table: printable bytes stand for themselves, the others for
/// U+0100 onwards in byte order.
pub fn byte_chars() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut n = 0u32;
    for b in 0..256u32 {
        let printable = (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
        table[b as usize] = if printable {
            char::from_u32(b).unwrap_or('?')
        } else {
            n += 1;
            char::from_u32(255 + n).unwrap_or('?')
        };
    }
    table
}

/// HF's WordPiece `cleanup`, in its order.
fn cleanup(s: &str) -> String {
    s.replace(" .", ".")
        .replace(" ?", "?")
        .replace(" !", "!")
        .replace(" ,", ",")
        .replace(" ' ", "'")
        .replace(" n't", "n't")
        .replace(" 'm", "'m")
        .replace(" do not", " don't")
        .replace(" 's", "'s")
        .replace(" 've", "'ve")
        .replace(" 're", "'re")
}

fn byte_of(token: &str) -> Option<u8> {
    let b = token.as_bytes();
    if b.len() == 6 && token.starts_with("<0x") && token.ends_with('>') {
        u8::from_str_radix(&token[3..5], 16).ok()
    } else {
        None
    }
}

fn flush_bytes(bytes: &mut Vec<u8>, out: &mut Vec<String>) {
    if bytes.is_empty() {
        return;
    }
    match String::from_utf8(std::mem::take(bytes)) {
        Ok(s) => out.push(s),
        Err(e) => out.extend(std::iter::repeat("\u{FFFD}".to_string()).take(e.as_bytes().len())),
    }
}

impl Step {
    fn apply(&self, tokens: Vec<String>) -> Result<Vec<String>, CoreError> {
        Ok(match self {
            Step::Metaspace { replacement, prefixed } => tokens
                .into_iter()
                .enumerate()
                .map(|(i, t)| {
                    let mut out = String::with_capacity(t.len());
                    for c in t.chars() {
                        if c != *replacement {
                            out.push(c);
                        } else if !(i == 0 && *prefixed) {
                            out.push(' ');
                        }
                    }
                    out
                })
                .collect(),
            Step::Replace(pattern, content) => {
                let mut out = Vec::with_capacity(tokens.len());
                for t in tokens {
                    let mut s = String::with_capacity(t.len());
                    let mut last = 0;
                    for (a, z) in pattern.matches(&t)? {
                        s.push_str(&t[last..a]);
                        s.push_str(content);
                        last = z;
                    }
                    s.push_str(&t[last..]);
                    out.push(s);
                }
                out
            }
            Step::ByteFallback => {
                let mut out = Vec::with_capacity(tokens.len());
                let mut bytes = Vec::new();
                for t in tokens {
                    match byte_of(&t) {
                        Some(b) => bytes.push(b),
                        None => {
                            flush_bytes(&mut bytes, &mut out);
                            out.push(t);
                        }
                    }
                }
                flush_bytes(&mut bytes, &mut out);
                out
            }
            Step::Fuse => vec![tokens.concat()],
            Step::ByteLevel => {
                let table = byte_chars();
                let back: rustc_hash::FxHashMap<char, u8> =
                    table.iter().enumerate().map(|(b, &c)| (c, b as u8)).collect();
                let mut bytes = Vec::new();
                for t in &tokens {
                    match t.chars().map(|c| back.get(&c).copied()).collect::<Option<Vec<u8>>>() {
                        Some(b) => bytes.extend(b),
                        None => bytes.extend_from_slice(t.as_bytes()),
                    }
                }
                vec![String::from_utf8_lossy(&bytes).into_owned()]
            }
            Step::WordPiece { prefix, cleanup: clean } => tokens
                .into_iter()
                .enumerate()
                .map(|(i, t)| {
                    let t = if i == 0 {
                        t
                    } else if t.starts_with(prefix.as_str()) {
                        t.replacen(prefix.as_str(), "", 1)
                    } else {
                        format!(" {t}")
                    };
                    if *clean {
                        cleanup(&t)
                    } else {
                        t
                    }
                })
                .collect(),
            Step::Bpe { suffix } => {
                let n = tokens.len();
                tokens
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| t.replace(suffix.as_str(), if i + 1 == n { "" } else { " " }))
                    .collect()
            }
            Step::Strip { content, start, stop } => tokens
                .into_iter()
                .map(|t| {
                    let chars: Vec<char> = t.chars().collect();
                    let mut a = 0;
                    for (i, &c) in chars.iter().enumerate().take(*start) {
                        if c != *content {
                            break;
                        }
                        a = i + 1;
                    }
                    let mut z = chars.len();
                    for i in 0..(*stop).min(chars.len()) {
                        let at = chars.len() - i - 1;
                        if chars[at] != *content {
                            break;
                        }
                        z = at;
                    }
                    chars[a..z.max(a)].iter().collect()
                })
                .collect(),
        })
    }
}

/// The text of `tokens` after the chain (`None`: HF's default, a space between tokens).
pub fn decode(steps: Option<&[Step]>, tokens: Vec<String>) -> Result<String, CoreError> {
    let Some(steps) = steps else { return Ok(tokens.join(" ")) };
    let mut tokens = tokens;
    for s in steps {
        tokens = s.apply(tokens)?;
    }
    Ok(tokens.concat())
}
