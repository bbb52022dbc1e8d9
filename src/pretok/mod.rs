//! Pre-tokenization: cutting text into the pieces that BPE merges never cross.
//!
//! A `Splitter` wraps the regex of a tokenizer (the official GPT-2 / cl100k / o200k patterns or
//! a user's own). The training-side use is `count::Counter`, which cuts a corpus line by line
//! and counts distinct pieces in parallel.

pub mod fast;

use fancy_regex::Regex;

use crate::error::CoreError;

/// The official patterns, by the names the CLI accepts.
/// These are the spellings of tiktoken's current `tiktoken_ext/openai_public.py` (possessive
/// quantifiers; cl100k's `\s++$` takes a whitespace run that ends the text as one piece).
pub const GPT2: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
pub const CL100K: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
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
pub const PATTERNS: [(&str, &str); 4] =
    [("gpt2", GPT2), ("cl100k", CL100K), ("o200k", O200K), ("whitespace", WHITESPACE)];

/// Other spellings of the built-in patterns that split all text identically: the original
/// GPT-2 pattern (without possessive quantifiers). It is stored and hashed as the built-in.
/// (The original cl100k spelling is not an alias: without `\s++$` it cuts a trailing
/// " \n  " in two, so it stays a custom pattern.)
pub const ALIASES: [(&str, &str); 1] =
    [(r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+", GPT2)];

/// The canonical spelling of `pattern` (itself unless it is a known alias of a built-in).
pub fn canonical(pattern: &str) -> &str {
    ALIASES.iter().find(|(alias, _)| *alias == pattern).map(|(_, c)| *c).unwrap_or(pattern)
}

/// Cuts text into pieces, keeping only the matches (as tiktoken does: text that the pattern
/// does not match is dropped, which never happens with the official patterns), or with
/// `Splitter::keeping_gaps` the text between matches as pieces too (Hugging Face's `Split`
/// with the `Isolated` behavior). The official patterns run on hand-written splitters
/// (`fast`), equal to the regex and many times faster; any other pattern runs on fancy-regex.
pub enum Splitter {
    Fast(fast::Builtin),
    Regex(Regex),
    /// A pattern whose matches and the text between them are pieces.
    RegexWithGaps(Regex),
}

impl Splitter {
    pub fn new(pattern: &str) -> Result<Splitter, CoreError> {
        let pattern = canonical(pattern);
        if let Some(b) = fast::Builtin::from_pattern(pattern) {
            return Ok(Splitter::Fast(b));
        }
        Splitter::new_regex(pattern)
    }

    /// A splitter that keeps the text between the matches too, each gap one piece. The
    /// official patterns match all text, so for them this is `new`.
    pub fn keeping_gaps(pattern: &str) -> Result<Splitter, CoreError> {
        match Splitter::new(pattern)? {
            Splitter::Regex(re) => Ok(Splitter::RegexWithGaps(re)),
            other => Ok(other),
        }
    }

    /// The same pattern on the regex engine (for tests and benchmarks of the fast path).
    pub fn new_regex(pattern: &str) -> Result<Splitter, CoreError> {
        Regex::new(pattern).map(Splitter::Regex).map_err(|e| CoreError::Pattern(e.to_string()))
    }

    /// (pattern, keeps gaps): what `new` or `keeping_gaps` rebuilds this splitter from.
    pub fn source(&self) -> (&str, bool) {
        match self {
            Splitter::Fast(b) => (b.pattern(), false),
            Splitter::Regex(re) => (re.as_str(), false),
            Splitter::RegexWithGaps(re) => (re.as_str(), true),
        }
    }

    /// Calls `f(start, end)` with the byte range of each piece, in order. A regex can fail on
    /// an input (fancy-regex gives up past its backtracking limit); the official patterns never do.
    pub fn split(&self, text: &str, f: impl FnMut(usize, usize)) -> Result<(), CoreError> {
        match self {
            Splitter::Fast(b) => {
                fast::split(*b, text, f);
                Ok(())
            }
            Splitter::Regex(regex) => regex_split(regex, text, false, f),
            Splitter::RegexWithGaps(regex) => regex_split(regex, text, true, f),
        }
    }
}

/// The non-empty matches of `regex` in order and, with `gaps`, the non-empty text before,
/// between and after them.
fn regex_split(regex: &Regex, text: &str, gaps: bool, mut f: impl FnMut(usize, usize)) -> Result<(), CoreError> {
    let mut last = 0;
    for m in regex.find_iter(text) {
        let m = m.map_err(|e| {
            let what = "the pre-tokenizer pattern failed on this input";
            CoreError::input(format!("{what} ({e}); simplify the pattern or split the text"))
        })?;
        if m.end() > m.start() {
            if gaps && m.start() > last {
                f(last, m.start());
            }
            f(m.start(), m.end());
            last = m.end();
        }
    }
    if gaps && text.len() > last {
        f(last, text.len());
    }
    Ok(())
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
    fn aliases_split_like_the_canonical_patterns() {
        let mut texts: Vec<String> = ["kjv.txt", "dr.en.txt", "dr.zh-cn.txt"]
            .iter()
            .filter_map(|f| crate::test_data::read(f))
            .map(|t| t.chars().take(300_000).collect())
            .collect();
        texts.push("a  b \t\n\n  c\r\n d  \u{a0}x  ' 's 'S 1234567 !!  \n  ".into());
        for (alias, canon) in ALIASES {
            let a = Splitter::new_regex(alias).unwrap();
            let c = Splitter::new_regex(canon).unwrap();
            for t in &texts {
                let (mut x, mut y) = (vec![], vec![]);
                a.split(t, |s, e| x.push((s, e))).unwrap();
                c.split(t, |s, e| y.push((s, e))).unwrap();
                assert_eq!(x, y);
            }
            assert!(matches!(Splitter::new(alias).unwrap(), Splitter::Fast(_)));
        }
    }

    #[test]
    fn keeping_gaps_keeps_the_text_between_matches() {
        let pieces = |s: &Splitter, text: &str| {
            let mut out = vec![];
            s.split(text, |a, b| out.push(text[a..b].to_string())).unwrap();
            out
        };
        let digits = Splitter::keeping_gaps(r"\d+").unwrap();
        assert_eq!(pieces(&digits, "room 101 is here"), ["room ", "101", " is here"]);
        assert_eq!(pieces(&digits, "12ab34"), ["12", "ab", "34"]);
        assert_eq!(pieces(&Splitter::new(r"\d+").unwrap(), "room 101 is here"), ["101"]);
        // Empty matches are no pieces and cut nothing.
        assert_eq!(pieces(&Splitter::keeping_gaps(r"\d*").unwrap(), "a1b"), ["a", "1", "b"]);
        assert!(matches!(Splitter::keeping_gaps(GPT2).unwrap(), Splitter::Fast(_)));
    }

    #[test]
    fn official_patterns_compile_and_split() {
        assert_eq!(pieces(GPT2, "Hello world's  end"), ["Hello", " world", "'s", " ", " end"]);
        assert_eq!(pieces(CL100K, "I'LL pay 12345!\n\n"), ["I", "'LL", " pay", " ", "123", "45", "!\n\n"]);
        // tiktoken's current cl100k keeps a whitespace run that ends the text whole.
        assert_eq!(pieces(CL100K, "x \n  "), ["x", " \n  "]);
        assert_eq!(pieces(CL100K, "x \n  y"), ["x", " \n", " ", " y"]);
        assert_eq!(pieces(O200K, "HelloWorld don't"), ["Hello", "World", " don't"]);
        assert_eq!(pieces(WHITESPACE, " low  lower\n"), ["low", "lower"]);
    }
}
