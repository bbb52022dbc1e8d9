//! Pre-tokenization: cutting text into the pieces that BPE merges never cross.
//!
//! A `Splitter` wraps the regex of a tokenizer (the official GPT-2 / cl100k / o200k patterns or
//! a user's own). `count_pieces` is the training-side use: it cuts a corpus line by line and
//! counts distinct pieces in parallel.

pub mod count;

pub use count::{count_pieces, count_words};

use fancy_regex::Regex;

/// The official patterns, by the names the CLI accepts.
pub const GPT2: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
pub const CL100K: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+";
pub const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);
/// Classic word splitting for character-level BPE: runs of non-space characters.
pub const WHITESPACE: &str = r"\S+";

/// The built-in patterns by the names the CLI and the registry use.
pub const PATTERNS: [(&str, &str); 4] = [("gpt2", GPT2), ("cl100k", CL100K), ("o200k", O200K), ("whitespace", WHITESPACE)];

/// Cuts text into pieces with a regex, keeping only the matches (as tiktoken does: text that
/// the pattern does not match is dropped, which never happens with the official patterns).
pub struct Splitter {
    regex: Regex,
}

impl Splitter {
    pub fn new(pattern: &str) -> Result<Splitter, String> {
        let regex = Regex::new(pattern).map_err(|e| e.to_string())?;
        Ok(Splitter { regex })
    }

    /// Calls `f(start, end)` with the byte range of each piece, in order.
    pub fn split(&self, text: &str, mut f: impl FnMut(usize, usize)) -> Result<(), String> {
        for m in self.regex.find_iter(text) {
            let m = m.map_err(|e| format!("the pre-tokenizer pattern failed on this input: {e}"))?;
            if m.end() > m.start() {
                f(m.start(), m.end());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(pattern: &str, text: &str) -> Vec<String> {
        let s = Splitter::new(pattern).unwrap();
        let mut out = vec![];
        s.split(text, |a, b| out.push(text[a..b].to_string())).unwrap();
        out
    }

    #[test]
    fn official_patterns_compile_and_split() {
        assert_eq!(pieces(GPT2, "Hello world's  end"), ["Hello", " world", "'s", " ", " end"]);
        assert_eq!(pieces(CL100K, "I'LL pay 12345!\n\n"), ["I", "'LL", " pay", " ", "123", "45", "!\n\n"]);
        assert_eq!(pieces(O200K, "HelloWorld don't"), ["Hello", "World", " don't"]);
        assert_eq!(pieces(WHITESPACE, " low  lower\n"), ["low", "lower"]);
    }
}
