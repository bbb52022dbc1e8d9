//! `CoreError`: every way the core refuses an input or stops early, as a type. The binding maps
//! it to Python exceptions by variant, in one function (`py.rs`), so nothing on the Python side
//! ever matches message text.
//!
//! `Display` is the message a user reads: one complete line that names what was found and what
//! to do next. It names no CLI flags (the core does not know how it was called); callers that
//! want their own wording use the variant's fields.

use std::fmt;

use crate::encode::Kind;

#[derive(Clone, Debug, PartialEq)]
pub enum CoreError {
    /// Input the core cannot use as given: a vocabulary, content bytes, a setting, a text. The
    /// string is the whole message.
    Input(String),
    /// A pre-tokenizer pattern that does not compile, with the regex engine's reason.
    Pattern(String),
    /// A training vocabulary size below what the base alphabet (`base`, described in words)
    /// already takes: at least `needed` tokens.
    VocabTooSmall { requested: usize, needed: usize, base: String },
    /// A training vocabulary size that the corpus cannot fill: it yields `reachable` tokens.
    VocabTooLarge { requested: usize, reachable: usize },
    /// The caller's progress callback asked to stop.
    Interrupted,
    /// A token id outside the vocabulary; valid ids are below `bound` (there may be gaps).
    UnknownId { id: i64, bound: usize },
    /// An operation this kind of tokenizer does not have (n-best and sampling are Unigram's).
    Unsupported { operation: &'static str, kind: Kind },
    /// A text holds `token`, which the call's special-token rule refuses (`encode::Rule`);
    /// `index` is the text's place in a batch.
    Refused { token: String, index: Option<usize> },
}

impl CoreError {
    /// `Input` from anything string-like.
    pub fn input(message: impl Into<String>) -> CoreError {
        CoreError::Input(message.into())
    }
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::Input(message) => f.write_str(message),
            CoreError::Pattern(reason) => write!(
                f,
                "the pre-tokenizer pattern is not a valid regex ({}); fix it or use a built-in pattern \
                 (gpt2, cl100k, o200k, whitespace)",
                one_line(reason)
            ),
            CoreError::VocabTooSmall { requested, needed, base } => write!(
                f,
                "the vocabulary size {requested} is smaller than the base alphabet ({base}); raise it to at \
                 least {needed}"
            ),
            CoreError::VocabTooLarge { requested, reachable } => write!(
                f,
                "the vocabulary size {requested} is too large for this corpus, which yields only {reachable} \
                 tokens; lower the vocabulary size or give more text"
            ),
            CoreError::Interrupted => f.write_str("stopped before the end; nothing was produced"),
            CoreError::UnknownId { id, bound: 0 } => write!(f, "token id {id} does not exist: the vocabulary is empty"),
            CoreError::UnknownId { id, bound } => write!(
                f,
                "token id {id} is not in this vocabulary (ids are 0..{}); use ids this tokenizer produced",
                bound - 1
            ),
            CoreError::Unsupported { operation, kind } => {
                write!(f, "{kind} tokenizers have no {operation}; use a Unigram tokenizer for it")
            }
            CoreError::Refused { token, index } => {
                match index {
                    Some(i) => write!(f, "text {i} of the batch")?,
                    None => f.write_str("text")?,
                }
                write!(f, " contains the special token {token:?}; allow it to encode it as a special token, or refuse none to encode it as text")
            }
        }
    }
}

impl std::error::Error for CoreError {}

/// A regex engine's reason on one line (regex-syntax prints the pattern and a caret below it).
fn one_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line_and_say_what_to_do() {
        let all = [
            CoreError::Pattern("regex parse error:\n    (\n    ^\nerror: unclosed group".into()),
            CoreError::VocabTooSmall { requested: 10, needed: 256, base: "256 bytes".into() },
            CoreError::VocabTooLarge { requested: 9000, reachable: 812 },
            CoreError::Interrupted,
            CoreError::UnknownId { id: 1_000_000, bound: 100_277 },
            CoreError::Unsupported { operation: "n-best segmentation", kind: Kind::ByteBpe },
            CoreError::Refused { token: "<s>\n".into(), index: Some(3) },
        ];
        for e in all {
            let m = e.to_string();
            assert!(!m.contains('\n'), "{m}");
        }
        assert_eq!(
            CoreError::VocabTooSmall { requested: 10, needed: 256, base: "256 bytes".into() }.to_string(),
            "the vocabulary size 10 is smaller than the base alphabet (256 bytes); raise it to at least 256"
        );
        assert!(CoreError::UnknownId { id: 7, bound: 5 }.to_string().contains("0..4"));
    }
}
