//! Hugging Face's `tokenizers` pipeline, step by step, for the `tokenizer.json` layouts that
//! tokreg's own encoders do not cover (the converters' Unigram files: `Precompiled`, `Replace`,
//! `Strip`... then `Metaspace`; BPE files with normalizer sequences and chained `Split`s; CLIP;
//! see docs/hf-layouts.md).
//!
//! A text goes through: normalizer steps (`normalizers.rs`, each keeping HF's alignment of the
//! normalized text with the original, `normalized.rs`), pre-tokenizer steps (`pretok.rs`: pieces
//! with their spans), the model on each piece (`unigram.rs`: HF's Unigram; `bpe.rs`: HF's BPE),
//! and ids; decoding runs HF's decoder chain over the tokens' texts as HF spells them
//! (`decoders.rs`; byte-level tokens in GPT-2's alphabet). Offsets are HF's: a token
//! spans the original characters its normalized bytes came from.
//!
//! Everything is built from plain steps (`Spec`: a name and string arguments), which the Python
//! side makes from the version's config (tokreg/algorithms/hf_pipeline.py); unknown names and
//! bad arguments are refused with the step named.

mod bpe;
mod decoders;
mod normalized;
mod normalizers;
mod pretok;
mod tables;
mod unigram;
mod wordpiece;

use std::sync::Arc;

use fancy_regex::Regex;

use crate::encode::{check_ids, Encode, Kind};
use crate::error::CoreError;
use crate::normalize::CharsMap;
use normalized::Normalized;
use normalizers::{Form, Pattern};

/// A token's id and its byte span in the whole text.
type Token = (u32, (usize, usize));

/// One step as the binding hands it over: its HF type name and its arguments as strings.
pub type Spec = (String, Vec<String>);

/// The whole pipeline's steps: normalizers, pre-tokenizers, decoders (`None`: no decoder), and
/// the blobs `Precompiled` steps point to by index.
pub struct Steps {
    pub normalizer: Vec<Spec>,
    pub pre_tokenizer: Vec<Spec>,
    pub decoder: Option<Vec<Spec>>,
    pub blobs: Vec<Vec<u8>>,
}

pub use bpe::Options as BpeOptions;

enum PieceModel {
    Unigram(unigram::Model),
    Bpe(bpe::Model),
    WordPiece(wordpiece::Model),
}

/// A whole HF pipeline: the encoder behind `Tokenizer::hf_unigram` and `Tokenizer::hf_bpe`.
pub struct HfPipe {
    normalizer: Vec<normalizers::Step>,
    pre_tokenizer: Vec<pretok::Step>,
    decoder: Option<Vec<decoders::Step>>,
    model: PieceModel,
    kind: Kind,
    /// Per id: the token as stored (raw bytes for byte-level BPE).
    stored: Vec<Vec<u8>>,
    /// Per id: the token as HF spells it (what its decoders read).
    texts: Vec<String>,
}

fn bad(step: &str, why: impl std::fmt::Display) -> CoreError {
    CoreError::input(format!("the Hugging Face step {step}: {why}"))
}

fn arg(spec: &Spec, i: usize) -> Result<&str, CoreError> {
    spec.1.get(i).map(String::as_str).ok_or_else(|| bad(&spec.0, format!("argument {i} is missing")))
}

fn flag(spec: &Spec, i: usize) -> Result<bool, CoreError> {
    match arg(spec, i)? {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(bad(&spec.0, format!("{other:?} is not true or false"))),
    }
}

fn one_char(spec: &Spec, i: usize) -> Result<char, CoreError> {
    let s = arg(spec, i)?;
    let mut it = s.chars();
    match (it.next(), it.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(bad(&spec.0, format!("{s:?} is not one character"))),
    }
}

/// A pattern from ("string" | "regex", text).
fn pattern(spec: &Spec, i: usize) -> Result<Pattern, CoreError> {
    let text = arg(spec, i + 1)?.to_string();
    match arg(spec, i)? {
        "string" if !text.is_empty() => Ok(Pattern::Literal(text)),
        "string" => Err(bad(&spec.0, "an empty pattern")),
        "regex" => Regex::new(&text)
            .map(|r| Pattern::Regex(Arc::new(r)))
            .map_err(|e| bad(&spec.0, format!("the regex {text:?} does not compile: {e}"))),
        other => Err(bad(&spec.0, format!("the pattern kind {other:?}"))),
    }
}

fn compiled(step: &str, re: &str) -> Result<Regex, CoreError> {
    Regex::new(re).map_err(|e| bad(step, e))
}

fn normalizer(spec: &Spec, blobs: &[Vec<u8>]) -> Result<normalizers::Step, CoreError> {
    use normalizers::Step as S;
    Ok(match spec.0.as_str() {
        "Precompiled" => {
            let i: usize = arg(spec, 0)?.parse().map_err(|_| bad("Precompiled", "a bad blob index"))?;
            let blob = blobs.get(i).ok_or_else(|| bad("Precompiled", "a missing blob"))?;
            S::Precompiled(Arc::new(CharsMap::new(blob)?))
        }
        "Replace" => S::Replace(pattern(spec, 0)?, arg(spec, 2)?.to_string()),
        "Prepend" => S::Prepend(arg(spec, 0)?.to_string()),
        "Strip" => S::Strip { left: flag(spec, 0)?, right: flag(spec, 1)? },
        "StripAccents" => S::StripAccents,
        "Lowercase" => S::Lowercase,
        "NFC" => S::Unicode(Form::Nfc),
        "NFD" => S::Unicode(Form::Nfd),
        "NFKC" => S::Unicode(Form::Nfkc),
        "NFKD" => S::Unicode(Form::Nfkd),
        "BertNormalizer" => S::Bert {
            clean_text: flag(spec, 0)?,
            chinese: flag(spec, 1)?,
            strip_accents: flag(spec, 2)?,
            lowercase: flag(spec, 3)?,
        },
        other => return Err(bad(other, "is not a normalizer tokreg implements")),
    })
}

fn pre_tokenizer(spec: &Spec) -> Result<pretok::Step, CoreError> {
    use pretok::Step as S;
    Ok(match spec.0.as_str() {
        "Split" => S::Split {
            pattern: pattern(spec, 0)?,
            behavior: pretok::Behavior::from_name(arg(spec, 2)?)?,
            invert: flag(spec, 3)?,
        },
        "ByteLevel" => S::ByteLevel {
            add_prefix_space: flag(spec, 0)?,
            regex: if flag(spec, 1)? { Some(Arc::new(compiled("ByteLevel", pretok::GPT2)?)) } else { None },
        },
        "Digits" => S::Digits { individual: flag(spec, 0)? },
        "Punctuation" => S::Punctuation { behavior: pretok::Behavior::from_name(arg(spec, 0)?)? },
        "Whitespace" => S::Whitespace(Arc::new(compiled("Whitespace", pretok::WORDS)?)),
        "WhitespaceSplit" => S::WhitespaceSplit,
        "BertPreTokenizer" => S::Bert,
        "Metaspace" => S::Metaspace {
            replacement: one_char(spec, 0)?,
            prepend: match arg(spec, 1)? {
                "always" => pretok::Prepend::Always,
                "first" => pretok::Prepend::First,
                "never" => pretok::Prepend::Never,
                other => return Err(bad("Metaspace", format!("the prepend_scheme {other:?}"))),
            },
            split: flag(spec, 2)?,
        },
        other => return Err(bad(other, "is not a pre-tokenizer tokreg implements")),
    })
}

fn decoder(spec: &Spec) -> Result<decoders::Step, CoreError> {
    use decoders::Step as S;
    Ok(match spec.0.as_str() {
        "Metaspace" => S::Metaspace { replacement: one_char(spec, 0)?, prefixed: flag(spec, 1)? },
        "Replace" => S::Replace(pattern(spec, 0)?, arg(spec, 2)?.to_string()),
        "ByteFallback" => S::ByteFallback,
        "Fuse" => S::Fuse,
        "ByteLevel" => S::ByteLevel,
        "BPEDecoder" => S::Bpe { suffix: arg(spec, 0)?.to_string() },
        "WordPiece" => S::WordPiece { prefix: arg(spec, 0)?.to_string(), cleanup: flag(spec, 1)? },
        "Strip" => {
            let n = |i| arg(spec, i)?.parse::<usize>().map_err(|_| bad("Strip", "a bad count"));
            S::Strip { content: one_char(spec, 0)?, start: n(1)?, stop: n(2)? }
        }
        other => return Err(bad(other, "is not a decoder tokreg implements")),
    })
}

/// The steps made from their specs.
type Made = (Vec<normalizers::Step>, Vec<pretok::Step>, Option<Vec<decoders::Step>>);

fn make(steps: &Steps) -> Result<Made, CoreError> {
    let normalizer = steps.normalizer.iter().map(|s| normalizer(s, &steps.blobs)).collect::<Result<_, _>>()?;
    let pre_tokenizer = steps.pre_tokenizer.iter().map(pre_tokenizer).collect::<Result<_, _>>()?;
    let decoder = match &steps.decoder {
        None => None,
        Some(d) => Some(d.iter().map(decoder).collect::<Result<_, _>>()?),
    };
    Ok((normalizer, pre_tokenizer, decoder))
}

impl HfPipe {
    /// HF's Unigram; `pieces`: (text, score) by id.
    pub fn unigram(
        steps: &Steps,
        pieces: Vec<(String, f64)>,
        unk_id: u32,
        byte_fallback: bool,
    ) -> Result<HfPipe, CoreError> {
        let (normalizer, pre_tokenizer, decoder) = make(steps)?;
        let model = PieceModel::Unigram(unigram::Model::new(&pieces, unk_id, byte_fallback)?);
        let texts: Vec<String> = pieces.into_iter().map(|p| p.0).collect();
        let stored = texts.iter().map(|t| t.as_bytes().to_vec()).collect();
        Ok(HfPipe { normalizer, pre_tokenizer, decoder, model, kind: Kind::Unigram, stored, texts })
    }

    /// HF's BPE; `tokens`: (id, bytes, special) with ids 0..n, `merges`: (left, right, result)
    /// in rank order. Byte-level tokens are raw bytes (specials are text).
    pub fn bpe(
        steps: &Steps,
        tokens: Vec<(u32, Vec<u8>, bool)>,
        merges: &[(u32, u32, u32)],
        opts: bpe::Options,
    ) -> Result<HfPipe, CoreError> {
        let (normalizer, pre_tokenizer, decoder) = make(steps)?;
        let table = decoders::byte_chars();
        let mut texts = Vec::with_capacity(tokens.len());
        for (i, (id, bytes, special)) in tokens.iter().enumerate() {
            if *id as usize != i {
                return Err(CoreError::input("BPE token ids must be 0..n without gaps; renumber the tokens"));
            }
            texts.push(if opts.byte_level && !special {
                bytes.iter().map(|&b| table[b as usize]).collect()
            } else {
                String::from_utf8(bytes.clone())
                    .map_err(|_| CoreError::input(format!("BPE token {i} is not UTF-8 text; fix the vocabulary")))?
            });
        }
        let kind = if opts.byte_level { Kind::ByteBpe } else { Kind::CharBpe };
        let pairs: Vec<(u32, Vec<u8>)> = tokens.iter().map(|t| (t.0, t.1.clone())).collect();
        let model = PieceModel::Bpe(bpe::Model::new(&pairs, merges, opts)?);
        let stored = tokens.into_iter().map(|t| t.1).collect();
        Ok(HfPipe { normalizer, pre_tokenizer, decoder, model, kind, stored, texts })
    }

    /// HF's WordPiece; `tokens`: (id, text) with ids 0..n.
    pub fn wordpiece(
        steps: &Steps,
        tokens: Vec<(u32, String)>,
        unk: u32,
        prefix: String,
        max_chars: usize,
    ) -> Result<HfPipe, CoreError> {
        let (normalizer, pre_tokenizer, decoder) = make(steps)?;
        if tokens.iter().enumerate().any(|(i, t)| t.0 as usize != i) {
            return Err(CoreError::input("WordPiece token ids must be 0..n without gaps; renumber the tokens"));
        }
        let model = PieceModel::WordPiece(wordpiece::Model::new(&tokens, unk, prefix, max_chars));
        let texts: Vec<String> = tokens.into_iter().map(|t| t.1).collect();
        let stored = texts.iter().map(|t| t.as_bytes().to_vec()).collect();
        Ok(HfPipe { normalizer, pre_tokenizer, decoder, model, kind: Kind::WordPiece, stored, texts })
    }

    /// The text normalized, as HF's normalizer leaves it.
    fn normalized(&self, text: &str, at: usize) -> Result<Normalized, CoreError> {
        let mut n = Normalized::new(text);
        n.shift = at as u32;
        n.at_start = at == 0;
        for step in &self.normalizer {
            step.apply(&mut n)?;
        }
        Ok(n)
    }

    /// (id, byte span in `text`) of each token of `text`, a segment starting at byte `at` of
    /// the whole text (spans are in the whole text).
    fn tokens(&self, text: &str, at: usize) -> Result<Vec<Token>, CoreError> {
        let n = self.normalized(text, at)?;
        let mut out = Vec::new();
        let mut toks = Vec::new();
        for piece in pretok::pre_tokenize(&self.pre_tokenizer, n)? {
            toks.clear();
            match &self.model {
                PieceModel::Unigram(m) => m.encode(&piece.text, &mut toks),
                PieceModel::Bpe(m) => m.encode(&piece.text, &mut toks),
                PieceModel::WordPiece(m) => m.encode(&piece.text, &mut toks),
            }
            out.extend(toks.iter().map(|&(id, s, e)| (id, piece.original(s, e))));
        }
        Ok(out)
    }
}

impl Encode for HfPipe {
    fn kind(&self) -> Kind {
        self.kind
    }

    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        self.encode_segment(text, 0, out)
    }

    fn encode_segment(&self, text: &str, at: usize, out: &mut Vec<u32>) -> Result<(), CoreError> {
        out.extend(self.tokens(text, at)?.into_iter().map(|t| t.0));
        Ok(())
    }

    fn spans(&self, text: &str, at: usize) -> Option<Result<Vec<Token>, CoreError>> {
        Some(self.tokens(text, at))
    }

    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, CoreError> {
        check_ids(ids, self.texts.len())?;
        let tokens = ids.iter().map(|&i| self.texts[i as usize].clone()).collect();
        Ok(decoders::decode(self.decoder.as_deref(), tokens)?.into_bytes())
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.stored.get(id as usize).map(Vec::as_slice)
    }

    fn vocab_size(&self) -> usize {
        self.texts.len()
    }

    fn normalize(&self, text: &str) -> String {
        self.normalized(text, 0).map(|n| n.text).unwrap_or_default()
    }
}
