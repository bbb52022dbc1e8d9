//! `Tokenizer`: one encoder (any algorithm, behind `Encode`) with its special tokens in front.
//! This is what the binding wraps; every call of its API goes through here, so a rule about
//! special tokens or ids holds for every algorithm at once.

use std::sync::OnceLock;

use fancy_regex::Regex;

use super::{unknown_id, Encode, Kind, Rule, Specials};
use crate::error::CoreError;

pub struct Tokenizer {
    pub(super) encoder: Box<dyn Encode>,
    pub(super) specials: Specials,
    /// StochasTok's table of token splits, made on first use (`stochastok.rs`).
    pub(super) splits: OnceLock<super::stochastok::Splits>,
}

impl Tokenizer {
    /// `specials`: (text, id) of the tokens that `encode` may emit for their text.
    pub fn new(encoder: Box<dyn Encode>, specials: Vec<(String, u32)>) -> Tokenizer {
        Tokenizer { encoder, specials: Specials::new(specials), splits: OnceLock::new() }
    }

    /// The encoder behind the special tokens (for decoding one id at a time).
    pub fn encoder(&self) -> &dyn Encode {
        &*self.encoder
    }

    pub fn kind(&self) -> Kind {
        self.encoder.kind()
    }

    pub fn vocab_size(&self) -> usize {
        self.encoder.vocab_size()
    }

    pub fn id_bound(&self) -> usize {
        self.encoder.id_bound()
    }

    /// (text, id) of the special tokens, by id.
    pub fn specials(&self) -> Vec<(String, u32)> {
        self.specials.list()
    }

    pub fn normalize(&self, text: &str) -> String {
        self.encoder.normalize(text)
    }

    /// One pre-tokenized piece as the encoder segments it (see `Encode::segment_piece`).
    pub fn segment_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), CoreError> {
        self.encoder.segment_piece(piece, out)
    }

    /// Special tokens are plain text here.
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>, CoreError> {
        let mut out = Vec::new();
        self.encoder.encode_into(text, &mut out)?;
        Ok(out)
    }

    /// The special-token rule of a call (see `Specials::rule`): `allowed` specials become
    /// their ids (None: all), and a text holding one of `refused` fails (None: every special
    /// token not allowed).
    pub fn rule(&self, allowed: Option<&[String]>, refused: Option<&[String]>) -> Result<Rule, CoreError> {
        self.specials.rule(allowed, refused)
    }

    /// The rule that turns the `allowed` specials into their ids and refuses nothing.
    pub fn allowing(&self, allowed: &[String]) -> Result<Rule, CoreError> {
        self.specials.rule(Some(allowed), Some(&[]))
    }

    /// The ids of `text` under `rule`: refused strings fail, allowed specials become their ids.
    pub fn encode(&self, text: &str, rule: &Rule) -> Result<Vec<u32>, CoreError> {
        rule.check(text, None)?;
        let mut out = Vec::new();
        self.encode_with(rule.emit.as_deref(), text, &mut out)?;
        Ok(out)
    }

    /// `encode` with the matcher of the allowed specials already made (`Rule::emit`).
    pub(super) fn encode_with(&self, matcher: Option<&Regex>, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        self.specials.encode_with(matcher, text, &*self.encoder, out)
    }

    /// The number of ids `encode(text, rule)` gives, without handing them out.
    pub fn count(&self, text: &str, rule: &Rule) -> Result<usize, CoreError> {
        Ok(self.encode(text, rule)?.len())
    }

    /// The first of `names` (special tokens) that occurs in `text`, by position.
    pub fn find_special(&self, text: &str, names: &[String]) -> Result<Option<String>, CoreError> {
        self.specials.find(text, names)
    }

    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, CoreError> {
        self.encoder.decode_bytes(ids)
    }

    pub fn token_bytes(&self, id: u32) -> Result<&[u8], CoreError> {
        self.encoder.token_bytes(id).ok_or_else(|| unknown_id(id, self.id_bound()))
    }

    pub fn nbest(&self, text: &str, k: usize) -> Result<Vec<(Vec<u32>, f64)>, CoreError> {
        self.encoder.nbest(text, k)
    }

    pub fn sample(&self, text: &str, alpha: f64, seed: u64) -> Result<Vec<u32>, CoreError> {
        self.encoder.sample(text, alpha, seed)
    }
}
