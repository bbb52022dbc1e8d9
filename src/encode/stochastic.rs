//! Seeded stochastic encodings, one option shape for every algorithm: a `Draw` (method,
//! strength `p`, seed) asks for one of
//!
//! - **BPE-dropout** (Provilkov et al., ACL 2020): while a BPE piece is merged, each candidate
//!   merge is skipped with probability `p` at every step (`bpe/dropout.rs`; BPE encoders only);
//! - **StochasTok** (Sims et al., arXiv 2506.01687): after the deterministic encoding,
//!   `floor(p * n)` expansion steps over the n ids, each picking a position uniformly and, if
//!   its token splits into two vocabulary tokens that concatenate to it, replacing it by one
//!   such pair picked uniformly (`stochastok.rs`; any algorithm whose decoding is a function
//!   of the concatenated token bytes);
//! - **Unigram sampling** (Kudo 2018, SentencePiece's subword regularization): a segmentation
//!   drawn with probability proportional to P(segmentation)^p (p is SentencePiece's alpha).
//!
//! Reproducibility: the random stream of a text is seeded by (seed, a hash of the text's
//! bytes), never by its place in a batch or the thread that encodes it. So the same seed gives
//! the same ids for a text alone, in any batch, on any thread count, in any shard of a dataset;
//! two equal texts get the same draw (change the seed per epoch for fresh draws). Special
//! tokens are cut out first, as in `encode` (the segments between them continue one stream).

use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use rustc_hash::FxHashSet;

use super::stochastok::Splits;
use super::{Encode, Flat, Kind, Rule, Tokenizer};
use crate::error::CoreError;
use crate::pool;

/// Which stochastic segmentation a `Draw` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    BpeDropout,
    StochasTok,
    Unigram,
}

impl Method {
    /// The method by the name the Python API and the dataset manifest use.
    pub fn from_name(name: &str) -> Result<Method, CoreError> {
        match name {
            "bpe-dropout" => Ok(Method::BpeDropout),
            "stochastok" => Ok(Method::StochasTok),
            "unigram" => Ok(Method::Unigram),
            _ => Err(CoreError::input(format!(
                "unknown stochastic method {name:?}; use bpe-dropout, stochastok or unigram"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::BpeDropout => "bpe-dropout",
            Method::StochasTok => "stochastok",
            Method::Unigram => "unigram",
        }
    }
}

/// One stochastic encoding's options: the method, its strength and the seed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Draw {
    pub method: Method,
    /// BPE-dropout: the probability of skipping a merge; StochasTok: expansion steps per id;
    /// Unigram: the exponent alpha of the sampling.
    pub p: f64,
    pub seed: u64,
}

impl Draw {
    pub fn new(method: Method, p: f64, seed: u64) -> Result<Draw, CoreError> {
        let ok = match method {
            Method::BpeDropout | Method::StochasTok => (0.0..=1.0).contains(&p),
            Method::Unigram => p.is_finite() && p > 0.0,
        };
        if !ok {
            let want = if method == Method::Unigram { "a finite alpha > 0 (e.g. 0.1)" } else { "p from 0 to 1" };
            return Err(CoreError::input(format!("{} needs {want}, not {p}", method.name())));
        }
        Ok(Draw { method, p, seed })
    }
}

/// SplitMix64 (Steele et al. 2014): tiny, seedable, and enough for drawing segmentations.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in 0..n (n > 0), by Lemire's multiply-shift (bias below 2^-32 for our n).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// SplitMix64's finalizer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of `text`'s random stream: the draw's seed and the text's bytes, 8 at a time
/// (little-endian, so the same on every machine), folded through SplitMix's finalizer.
pub fn stream_seed(seed: u64, text: &str) -> u64 {
    let bytes = text.as_bytes();
    let mut h = mix(seed ^ 0x5354_4f43_4841_5354) ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = mix(h ^ u64::from_le_bytes(c.try_into().unwrap()));
    }
    let mut last = [0u8; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    mix(h ^ u64::from_le_bytes(last))
}

/// An encoder that segments by a draw: what the special-token rule calls for each segment, so
/// that BPE-dropout and Unigram sampling see the same segments `encode` does. The stream's
/// state is atomic only because `Encode` is `Sync`; one text's segments run in order.
struct Drawing<'a> {
    inner: &'a dyn Encode,
    draw: Draw,
    state: AtomicU64,
}

impl Drawing<'_> {
    fn rng(&self) -> Rng {
        Rng(self.state.load(Ordering::Relaxed))
    }

    fn keep(&self, rng: Rng) {
        self.state.store(rng.0, Ordering::Relaxed);
    }
}

impl Encode for Drawing<'_> {
    fn kind(&self) -> Kind {
        self.inner.kind()
    }

    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        self.encode_segment(text, 0, out)
    }

    fn encode_segment(&self, text: &str, _at: usize, out: &mut Vec<u32>) -> Result<(), CoreError> {
        let mut rng = self.rng();
        match self.draw.method {
            Method::BpeDropout => self.inner.encode_dropout(text, self.draw.p, &mut rng, out)?,
            Method::Unigram => {
                let seed = rng.next_u64();
                out.extend(
                    self.inner.sample(text, self.draw.p, seed).map_err(|_| refuse(self.inner.kind(), self.draw))?,
                )
            }
            Method::StochasTok => unreachable!("StochasTok expands after encoding"),
        }
        self.keep(rng);
        Ok(())
    }

    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, CoreError> {
        self.inner.decode_bytes(ids)
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.inner.token_bytes(id)
    }

    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }
}

/// The one-line refusal of a method an algorithm cannot draw.
pub(crate) fn refuse(kind: Kind, draw: Draw) -> CoreError {
    let why = match draw.method {
        Method::BpeDropout => {
            "tokreg draws BPE-dropout in its own BPE encoders (rank map, merge table), not in this one"
        }
        Method::Unigram => "Unigram sampling needs a Unigram lattice",
        Method::StochasTok => "its tokens do not concatenate to the text (WordPiece joins words and marks pieces)",
    };
    CoreError::input(format!(
        "{kind} tokenizers cannot encode with {}: {why}; use {}",
        draw.method.name(),
        match kind {
            Kind::Unigram => "unigram or stochastok",
            Kind::WordPiece => "the deterministic encoding",
            _ => "stochastok",
        }
    ))
}

impl Tokenizer {
    /// The ids of `text` under `rule`, drawn by `draw` (see the module's doc).
    pub fn encode_drawn(&self, text: &str, rule: &Rule, draw: Draw, out: &mut Vec<u32>) -> Result<(), CoreError> {
        self.check_draw(draw)?;
        let mut rng = Rng::new(stream_seed(draw.seed, text));
        let matcher = rule.emit.as_deref();
        if draw.method == Method::StochasTok {
            let start = out.len();
            self.encode_with(matcher, text, out)?;
            let ids = out.split_off(start);
            self.splits().expand(&ids, draw.p, &mut rng, out);
            return Ok(());
        }
        let drawing = Drawing { inner: &*self.encoder, draw, state: AtomicU64::new(rng.0) };
        self.specials.encode_with(matcher, text, &drawing, out)
    }

    fn splits(&self) -> &Splits {
        self.splits.get_or_init(|| {
            let specials: FxHashSet<u32> = self.specials.list().into_iter().map(|(_, id)| id).collect();
            Splits::new(&*self.encoder, &specials)
        })
    }

    fn check_draw(&self, draw: Draw) -> Result<(), CoreError> {
        let kind = self.kind();
        let ok = match draw.method {
            Method::StochasTok => kind != Kind::WordPiece,
            Method::Unigram => kind == Kind::Unigram,
            Method::BpeDropout => matches!(kind, Kind::ByteBpe | Kind::CharBpe),
        };
        if ok {
            Ok(())
        } else {
            Err(refuse(kind, draw))
        }
    }

    /// `encode_drawn` for every text, in order, as flat buffers (see `encode_batch`): the
    /// result does not depend on `threads`, as each text's stream depends on the text alone.
    pub fn encode_batch_drawn<T>(
        &self,
        texts: &[T],
        rule: &Rule,
        draw: Draw,
        threads: usize,
    ) -> Result<Vec<Flat>, CoreError>
    where
        T: Deref<Target = str> + Sync,
    {
        self.check_draw(draw)?;
        let encode = |first: usize, texts: &[T]| -> Result<Flat, CoreError> {
            let mut flat = Flat { ids: Vec::new(), ends: Vec::with_capacity(texts.len()) };
            for (i, t) in texts.iter().enumerate() {
                rule.check(t, Some(first + i))?;
                self.encode_drawn(t, rule, draw, &mut flat.ids)?;
                flat.ends.push(flat.ids.len());
            }
            Ok(flat)
        };
        if threads == 1 {
            return Ok(vec![encode(0, texts)?]);
        }
        let parts: Vec<Result<Flat, CoreError>> = pool::install(threads, || {
            let chunk = (texts.len() / (rayon::current_num_threads() * 8)).clamp(1, 256);
            texts.par_chunks(chunk).enumerate().map(|(k, part)| encode(k * chunk, part)).collect()
        })?;
        parts.into_iter().collect()
    }
}
