//! From canonical content bytes (`crate::content`) to a `Tokenizer`: one constructor per
//! algorithm, each taking that algorithm's plain settings. This file decides, per algorithm,
//! which token records are ordinary and which are special:
//!
//! | algorithm | special tokens | ids |
//! |---|---|---|
//! | byte-level BPE | kind `special` | any (tiktoken leaves gaps before its specials) |
//! | character-level BPE | kind `special` | in record order; the leading `char` records are the alphabet |
//! | WordPiece | kind `special` | 0..n without gaps |
//! | Unigram, SentencePiece BPE | kinds `control` and `unknown` | 0..n without gaps |

use super::{check_id_span, Tokenizer};
use crate::bpe::{MergeEncoder, RankEncoder};
use crate::content::{self, Content};
use crate::error::CoreError;
use crate::normalize::{BertNormalizer, SpNormalizer};
use crate::pretok::Splitter;
use crate::unigram::{Piece, PieceKind};
use crate::{hfpipe, spbpe, unigram, wordpiece};

/// (text, id) of special tokens.
type Specials = Vec<(String, u32)>;
/// (id, bytes) of ordinary tokens.
type Ordinary<'c> = Vec<(u32, &'c [u8])>;

impl Tokenizer {
    /// Byte-level BPE over a rank map (tiktoken's rule), pre-tokenized by `pattern` (with
    /// `keep_gaps`, the text between its matches is pieces too).
    pub fn byte_bpe(content: &[u8], pattern: &str, keep_gaps: bool) -> Result<Tokenizer, CoreError> {
        let splitter = splitter(pattern, keep_gaps)?;
        let c = content::parse(content)?;
        let (ordinary, specials) = byte_level_tokens(&c)?;
        let encoder = RankEncoder::new(ordinary, specials.clone(), splitter)?;
        Ok(Tokenizer::new(Box::new(encoder), specials))
    }

    /// Superword BPE (`bpe::superword`): tokens below `transition` encode each piece of
    /// `pattern` (stage 1); the merges from rank `stage1_merges` on join the pieces of runs of
    /// up to `max_words` pieces (stage 2).
    pub fn superword_bpe(
        content: &[u8],
        pattern: &str,
        transition: u32,
        stage1_merges: usize,
        max_words: usize,
    ) -> Result<Tokenizer, CoreError> {
        let c = content::parse(content)?;
        let (ordinary, specials) = byte_level_tokens(&c)?;
        let stage2 = c.merges.get(stage1_merges..).ok_or_else(|| {
            CoreError::input("a superword version has fewer merges than its stage 1; the version is damaged")
        })?;
        let encoder =
            crate::bpe::SuperwordEncoder::new(ordinary, specials.clone(), pattern, transition, stage2, max_words)?;
        Ok(Tokenizer::new(Box::new(encoder), specials))
    }

    /// Byte-level BPE (as `byte_bpe`) whose tokens `removed` are never emitted: each is split
    /// into its parents (`bpe::residue_free`); every other id and segmentation is kept.
    pub fn residue_free_bpe(
        content: &[u8],
        pattern: &str,
        keep_gaps: bool,
        removed: &[u32],
    ) -> Result<Tokenizer, CoreError> {
        let splitter = splitter(pattern, keep_gaps)?;
        let c = content::parse(content)?;
        let (ordinary, specials) = byte_level_tokens(&c)?;
        let inner = RankEncoder::new(ordinary, specials.clone(), splitter)?;
        let encoder = crate::bpe::ResidueFree::new(Box::new(inner), &c.merges, removed)?;
        Ok(Tokenizer::new(Box::new(encoder), specials))
    }

    /// PickyBPE (`bpe::picky`): the content's merges with `removals` ((rank of the merge each
    /// follows, token), in order) replayed on each piece of `pattern`; tokens of kind `removed`
    /// are the ones no segmentation ends with.
    pub fn picky_bpe(content: &[u8], pattern: &str, removals: &[(u32, u32)]) -> Result<Tokenizer, CoreError> {
        let c = content::parse(content)?;
        let (ordinary, specials) = byte_level_tokens(&c)?;
        let removed: std::collections::HashSet<u32> =
            c.tokens.iter().filter(|t| t.kind == "removed").map(|t| t.id).collect();
        let tokens = ordinary.into_iter().map(|(id, b)| (id, b, removed.contains(&id))).collect();
        let encoder = crate::bpe::PickyEncoder::new(tokens, &c.merges, removals, Splitter::new(pattern)?)?;
        Ok(Tokenizer::new(Box::new(encoder), specials))
    }

    /// Classic character-level BPE over the content's merge table. `unk_token` names the
    /// special token that characters outside the alphabet become (none: they are dropped).
    pub fn char_bpe(
        content: &[u8],
        pattern: &str,
        keep_gaps: bool,
        end_of_word: Option<&str>,
        unk_token: Option<&str>,
    ) -> Result<Tokenizer, CoreError> {
        let splitter = splitter(pattern, keep_gaps)?;
        let c = content::parse(content)?;
        // The encoder numbers tokens by their place; ids must say the same.
        if c.tokens.iter().enumerate().any(|(i, t)| t.id as usize != i) {
            return Err(CoreError::input(
                "character-level BPE token ids must be 0..n without gaps; renumber the tokens",
            ));
        }
        let alphabet = c.tokens.iter().take_while(|t| t.kind == "char").count();
        let unk = unk_token
            .and_then(|u| c.tokens.iter().find(|t| t.kind == "special" && t.bytes == u.as_bytes()).map(|t| t.id));
        let specials = c
            .tokens
            .iter()
            .filter(|t| t.kind == "special")
            .map(|t| (String::from_utf8_lossy(t.bytes).into_owned(), t.id))
            .collect();
        // Characters after the leading alphabet: an extension's new characters.
        let extra: Vec<(u32, char)> = c.tokens[alphabet..]
            .iter()
            .filter(|t| t.kind == "char")
            .filter_map(|t| {
                let s = std::str::from_utf8(t.bytes).ok()?;
                let mut it = s.chars();
                match (it.next(), it.next()) {
                    (Some(ch), None) => Some((t.id, ch)),
                    _ => None,
                }
            })
            .collect();
        let tokens: Vec<Vec<u8>> = c.tokens.into_iter().map(|t| t.bytes.to_vec()).collect();
        let mut encoder = MergeEncoder::new(tokens, alphabet, &c.merges, end_of_word, unk, splitter)?;
        encoder.add_chars(&extra);
        Ok(Tokenizer::new(Box::new(encoder), specials))
    }

    /// WordPiece (greedy longest match) behind the BERT normalizer and pre-tokenizer;
    /// `decoder`: the decoder's (prefix, clean-up) (`wordpiece::decode`).
    pub fn wordpiece(
        content: &[u8],
        unk_token: &str,
        continuing_prefix: &str,
        max_input_chars_per_word: usize,
        normalizer: BertNormalizer,
        decoder: (&str, bool),
    ) -> Result<Tokenizer, CoreError> {
        let c = content::parse(content)?;
        let mut vocab = Vec::with_capacity(c.tokens.len());
        let mut specials = Vec::new();
        let mut seen = rustc_hash::FxHashMap::default();
        for (i, t) in c.tokens.into_iter().enumerate() {
            if t.id as usize != i {
                return Err(CoreError::input("WordPiece token ids must be 0..n without gaps; renumber the tokens"));
            }
            let s = std::str::from_utf8(t.bytes)
                .map_err(|_| CoreError::input(format!("WordPiece token {i} is not UTF-8 text; fix the vocabulary")))?
                .to_string();
            if s.is_empty() {
                return Err(CoreError::input(format!("WordPiece token {i} is empty; remove it")));
            }
            if let Some(first) = seen.insert(s.clone(), i) {
                return Err(CoreError::input(format!(
                    "WordPiece token {s:?} appears twice (ids {first} and {i}); keep one"
                )));
            }
            if t.kind == "special" {
                specials.push((s.clone(), t.id));
            }
            vocab.push(s);
        }
        let encoder = wordpiece::Encoder::new(&vocab, unk_token, continuing_prefix, max_input_chars_per_word)?;
        let wp = wordpiece::WordPiece::new(encoder, normalizer, vocab, continuing_prefix, decoder);
        Ok(Tokenizer::new(Box::new(wp), specials))
    }

    /// Unigram LM (Viterbi, n-best, sampling) behind SentencePiece's text handling; the
    /// unknown piece decodes to `unk_surface` (`unigram::sp_decode`).
    pub fn unigram(content: &[u8], normalizer: SpNormalizer, unk_surface: &str) -> Result<Tokenizer, CoreError> {
        let (pieces, specials) = sp_pieces(content::parse(content)?, "Unigram")?;
        let normalizer = keep_user_defined(normalizer, &pieces);
        let encoder = unigram::Encoder::new(&pieces)?;
        Ok(Tokenizer::new(Box::new(unigram::Unigram::new(encoder, normalizer, unk_surface)), specials))
    }

    /// Unigram as Hugging Face's `tokenizers` runs it (f64 path scores, its tie and unknown
    /// rules) behind the file's own normalizer, pre-tokenizer and decoder steps (`hfpipe`).
    /// `unk_special`: whether the unknown piece is one of the file's added tokens.
    pub fn hf_unigram(
        content: &[u8],
        steps: &hfpipe::Steps,
        byte_fallback: bool,
        unk_special: bool,
    ) -> Result<Tokenizer, CoreError> {
        let (pieces, mut specials) = sp_pieces(content::parse(content)?, "Unigram")?;
        let unk = pieces
            .iter()
            .position(|p| p.kind == PieceKind::Unknown)
            .ok_or_else(|| CoreError::input("the Unigram model has no unknown piece; add one (e.g. <unk>)"))?;
        if !unk_special {
            specials.retain(|s| s.1 as usize != unk);
        }
        let pieces = pieces.into_iter().map(|p| (p.text, p.score)).collect();
        let encoder = hfpipe::HfPipe::unigram(steps, pieces, unk as u32, byte_fallback)?;
        Ok(Tokenizer::new(Box::new(encoder), specials))
    }

    /// BPE as Hugging Face runs it (its merge rule, unknown and byte-fallback handling) behind
    /// a `tokenizer.json`'s own steps (`hfpipe`). Tokens of kind `special` are special tokens;
    /// `unk_token` names the unknown token.
    pub fn hf_bpe(
        content: &[u8],
        steps: &hfpipe::Steps,
        unk_token: Option<&str>,
        opts: hfpipe::BpeOptions,
    ) -> Result<Tokenizer, CoreError> {
        let c = content::parse(content)?;
        let mut specials = Vec::new();
        let mut tokens = Vec::with_capacity(c.tokens.len());
        let mut unk = None;
        for t in &c.tokens {
            let special = t.kind == "special";
            if special {
                let text = std::str::from_utf8(t.bytes)
                    .map_err(|_| CoreError::input(format!("special token {} is not UTF-8 text; rename it", t.id)))?;
                specials.push((text.to_string(), t.id));
            }
            if unk_token.is_some_and(|u| u.as_bytes() == t.bytes) {
                unk = Some(t.id);
            }
            tokens.push((t.id, t.bytes.to_vec(), special));
        }
        if unk_token.is_some() && unk.is_none() {
            return Err(CoreError::input("the BPE unknown token is not in the vocabulary; add it"));
        }
        let encoder = hfpipe::HfPipe::bpe(steps, tokens, &c.merges, hfpipe::BpeOptions { unk, ..opts })?;
        Ok(Tokenizer::new(Box::new(encoder), specials))
    }

    /// WordPiece as Hugging Face runs it behind a `tokenizer.json`'s own steps (`hfpipe`).
    pub fn hf_wordpiece(
        content: &[u8],
        steps: &hfpipe::Steps,
        unk_token: &str,
        prefix: &str,
        max_chars: usize,
    ) -> Result<Tokenizer, CoreError> {
        let c = content::parse(content)?;
        let mut specials = Vec::new();
        let mut tokens = Vec::with_capacity(c.tokens.len());
        for t in &c.tokens {
            let text = std::str::from_utf8(t.bytes)
                .map_err(|_| CoreError::input(format!("WordPiece token {} is not UTF-8 text", t.id)))?
                .to_string();
            if t.kind == "special" {
                specials.push((text.clone(), t.id));
            }
            tokens.push((t.id, text));
        }
        let unk = tokens
            .iter()
            .find(|t| t.1 == unk_token)
            .map(|t| t.0)
            .ok_or_else(|| CoreError::input("the WordPiece unknown token is not in the vocabulary; add it"))?;
        let encoder = hfpipe::HfPipe::wordpiece(steps, tokens, unk, prefix.to_string(), max_chars)?;
        Ok(Tokenizer::new(Box::new(encoder), specials))
    }

    /// SentencePiece BPE (score-driven merges) behind SentencePiece's text handling; the
    /// unknown piece decodes to `unk_surface`.
    pub fn sp_bpe(content: &[u8], normalizer: SpNormalizer, unk_surface: &str) -> Result<Tokenizer, CoreError> {
        let (pieces, specials) = sp_pieces(content::parse(content)?, "SentencePiece BPE")?;
        let normalizer = keep_user_defined(normalizer, &pieces);
        let encoder = spbpe::Encoder::new(&pieces)?;
        Ok(Tokenizer::new(Box::new(spbpe::SpBpe::new(encoder, normalizer, unk_surface)), specials))
    }
}

/// A byte-level vocabulary's (id, bytes) of ordinary tokens and (text, id) of special ones
/// (kind `special`, UTF-8 text), its ids checked to span no more than it needs.
fn byte_level_tokens<'c>(c: &Content<'c>) -> Result<(Ordinary<'c>, Specials), CoreError> {
    let mut ordinary = Vec::with_capacity(c.tokens.len());
    let mut specials = Vec::new();
    for t in &c.tokens {
        if t.kind == "special" {
            let text = std::str::from_utf8(t.bytes)
                .map_err(|_| CoreError::input(format!("special token {} is not UTF-8 text; rename it", t.id)))?;
            specials.push((text.to_string(), t.id));
        } else {
            ordinary.push((t.id, t.bytes));
        }
    }
    let max_id = ordinary.iter().map(|t| t.0).chain(specials.iter().map(|s| s.1)).max().unwrap_or(0);
    check_id_span(max_id, ordinary.len() + specials.len())?;
    Ok((ordinary, specials))
}

fn splitter(pattern: &str, keep_gaps: bool) -> Result<Splitter, CoreError> {
    if keep_gaps {
        Splitter::keeping_gaps(pattern)
    } else {
        Splitter::new(pattern)
    }
}

/// The pieces of SentencePiece-style content (ids 0..n, UTF-8 texts, scores, kinds) and its
/// special pieces (control and unknown).
/// SentencePiece's normalizer leaves user-defined pieces as they are (its prefix matcher);
/// that only changes anything when there are normalization rules.
fn keep_user_defined(normalizer: SpNormalizer, pieces: &[Piece]) -> SpNormalizer {
    if !normalizer.has_rules() {
        return normalizer;
    }
    let user: Vec<String> =
        pieces.iter().filter(|p| p.kind == PieceKind::UserDefined).map(|p| p.text.clone()).collect();
    normalizer.with_user_defined(user)
}

fn sp_pieces(c: Content, what: &str) -> Result<(Vec<Piece>, Specials), CoreError> {
    let mut pieces = Vec::with_capacity(c.tokens.len());
    let mut specials = Vec::new();
    for (i, t) in c.tokens.into_iter().enumerate() {
        if t.id as usize != i {
            return Err(CoreError::input(format!("{what} piece ids must be 0..n without gaps; renumber the pieces")));
        }
        let text = std::str::from_utf8(t.bytes)
            .map_err(|_| CoreError::input(format!("{what} piece {i} is not UTF-8 text; fix the model")))?
            .to_string();
        let kind = PieceKind::from_name(t.kind)?;
        if matches!(kind, PieceKind::Control | PieceKind::Unknown) {
            specials.push((text.clone(), t.id));
        }
        pieces.push(Piece { text, score: t.score.unwrap_or(0.0), kind });
    }
    Ok((pieces, specials))
}
