//! All PyO3 glue, and nothing else: converts Python values to the core's plain data,
//! releases the GIL around every hot loop, and maps core errors to Python exceptions
//! (`ValueError` for bad input, `KeyboardInterrupt` when Ctrl-C stops a training run).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::bpe::{self, MergeEncoder, RankEncoder};
use crate::pretok::{count_pieces, count_words, Splitter, PATTERNS};
use crate::unigram;
use crate::wordpiece;

fn value_error(e: String) -> PyErr {
    PyValueError::new_err(e)
}

fn splitter(pattern: &str) -> PyResult<Splitter> {
    Splitter::new(pattern).map_err(|e| value_error(format!("invalid pattern: {e}")))
}

/// Runs `f` on a rayon pool of `threads` threads (0 = rayon's default, one per core). Pools
/// are built once per thread count and kept: starting threads on every call would cost more
/// than encoding a batch of short texts.
fn with_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    if threads == 0 {
        return Ok(f());
    }
    let pool = {
        let mut pools = POOLS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        match pools.get(&threads) {
            Some(p) => p.clone(),
            None => {
                let p = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| value_error(e.to_string()))?;
                pools.entry(threads).or_insert(Arc::new(p)).clone()
            }
        }
    };
    Ok(pool.install(f))
}

/// Python ints for the token ids of one encoder, made on its first encode: turning a result
/// into a list then costs a reference-count increment per id instead of allocating an int
/// object (CPython caches only -5..=256). Seen from Python that is about half the time of
/// encoding English text, so it is worth its memory (40 bytes per id: 8 MB for o200k).
struct IdInts {
    ints: GILOnceCell<Vec<PyObject>>,
    bound: usize,
}

impl IdInts {
    fn new(bound: usize) -> IdInts {
        IdInts { ints: GILOnceCell::new(), bound }
    }

    fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let ints = self.ints.get_or_init(py, || {
            (0..self.bound as u32).map(|i| i.into_pyobject(py).map(|o| o.into_any().unbind()).unwrap()).collect()
        });
        PyList::new(
            py,
            ids.iter().map(|&i| match ints.get(i as usize) {
                Some(o) => o.clone_ref(py).into_bound(py),
                None => i.into_pyobject(py).map(|o| o.into_any()).unwrap(),
            }),
        )
    }

    /// One list per result, with Python's cyclic GC paused meanwhile: every new list counts
    /// toward a collection, and collections triggered by 200k fresh lists (which cannot form
    /// cycles) traverse all of them again and again; that was a quarter of a batch's time.
    fn lists<'py>(&self, py: Python<'py>, all: &[Vec<u32>]) -> PyResult<Vec<Bound<'py, PyList>>> {
        let _paused = GcPause::new(py);
        all.iter().map(|ids| self.list(py, ids)).collect()
    }

    /// `encode_batch` for an encoder that takes one text at a time: `encode` on each text, on
    /// `threads` threads with the GIL released, then the lists.
    fn batch<'py>(
        &self,
        py: Python<'py>,
        texts: &[PyBackedStr],
        threads: usize,
        encode: impl Fn(&str) -> Vec<u32> + Send + Sync,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        use rayon::prelude::*;
        let all: Vec<Vec<u32>> =
            py.allow_threads(|| with_threads(threads, || texts.par_iter().map(|t| encode(t)).collect()))?;
        self.lists(py, &all)
    }
}

/// Pauses CPython's cyclic garbage collector until dropped (if it was running).
struct GcPause(bool);

impl GcPause {
    fn new(_py: Python<'_>) -> GcPause {
        // SAFETY: called with the GIL held (the `Python` token proves it).
        GcPause(unsafe { pyo3::ffi::PyGC_Disable() } == 1)
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: dropped on the thread that holds the GIL, before the token's lifetime ends.
            unsafe { pyo3::ffi::PyGC_Enable() };
        }
    }
}

/// Reports progress to an optional Python callable and notices Ctrl-C. Called only from the
/// thread that released the GIL; it takes the GIL back for the duration of the call.
struct Progress {
    callback: Option<PyObject>,
    error: Option<PyErr>,
}

impl Progress {
    fn report(&mut self, phase: &str, done: u64, total: u64) -> bool {
        Python::with_gil(|py| {
            let r = match &self.callback {
                Some(cb) => cb.call1(py, (phase, done, total)).map(|_| ()),
                None => Ok(()),
            };
            match r.and_then(|_| py.check_signals()) {
                Ok(()) => true,
                Err(e) => {
                    self.error = Some(e);
                    false
                }
            }
        })
    }

    fn fail(&mut self, e: String) -> PyErr {
        match self.error.take() {
            Some(err) => err,
            None if e == "interrupted" => PyKeyboardInterrupt::new_err("interrupted"),
            None => value_error(e),
        }
    }
}

/// Counts the pieces of `inputs` and learns BPE merges. Returns a dict of plain values.
#[pyfunction]
#[pyo3(signature = (inputs, pattern, max_tokens, min_frequency=0, char_level=false, end_of_word=None, threads=0, progress=None))]
#[allow(clippy::too_many_arguments)]
fn train_bpe<'py>(
    py: Python<'py>,
    inputs: Vec<Bound<'py, PyBytes>>,
    pattern: &str,
    max_tokens: usize,
    min_frequency: u64,
    char_level: bool,
    end_of_word: Option<String>,
    threads: usize,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    let split = splitter(pattern)?;
    let slices: Vec<&[u8]> = inputs.iter().map(|b| b.as_bytes()).collect();
    let mut prog = Progress { callback: progress, error: None };
    let result = py.allow_threads(|| {
        with_threads(threads, || {
            let t0 = Instant::now();
            let counts = count_pieces(&slices, &split, &mut |d, t| prog.report("count", d, t))?;
            let count_seconds = t0.elapsed().as_secs_f64();
            let n_words = counts.len();
            let (alphabet, words) = if char_level {
                bpe::train::char_words(counts, end_of_word.as_deref())?
            } else {
                bpe::train::byte_words(counts)
            };
            if alphabet.len() > max_tokens {
                return Err(format!(
                    "the vocabulary size is smaller than the base alphabet: the corpus has {} base symbols",
                    alphabet.len()
                ));
            }
            let alphabet_size = alphabet.len();
            let t1 = Instant::now();
            let out = bpe::train(alphabet, words, max_tokens, min_frequency, &mut |d, t| prog.report("merge", d, t))?;
            Ok((out, alphabet_size, n_words, count_seconds, t1.elapsed().as_secs_f64()))
        })
        .map_err(|e| e.to_string())?
    });
    let (out, alphabet_size, n_words, count_seconds, merge_seconds) = result.map_err(|e| prog.fail(e))?;
    let d = PyDict::new(py);
    let tokens: Vec<Bound<PyBytes>> = out.tokens.iter().map(|t| PyBytes::new(py, t)).collect();
    d.set_item("tokens", tokens)?;
    d.set_item("token_counts", out.token_counts)?;
    let merges: Vec<(u32, u32, u32, u64)> = out.merges.iter().map(|m| (m.left, m.right, m.result, m.count)).collect();
    d.set_item("merges", merges)?;
    d.set_item("alphabet_size", alphabet_size)?;
    d.set_item("distinct_pieces", n_words)?;
    d.set_item("count_seconds", count_seconds)?;
    d.set_item("merge_seconds", merge_seconds)?;
    Ok(d)
}

/// Checks that a pre-tokenizer pattern compiles (raising ValueError with the reason if not);
/// returns its canonical spelling (a known alias of a built-in becomes the built-in).
#[pyfunction]
fn check_pattern(pattern: &str) -> PyResult<String> {
    splitter(pattern)?;
    Ok(crate::pretok::canonical(pattern).to_string())
}

/// Byte-level BPE encoder over a rank map (tiktoken's rule).
#[pyclass(frozen, module = "tokreg._core")]
struct ByteBpe {
    inner: Arc<RankEncoder>,
    ints: IdInts,
}

impl ByteBpe {
    fn wrap(inner: RankEncoder) -> ByteBpe {
        let ints = IdInts::new(inner.id_bound());
        ByteBpe { inner: Arc::new(inner), ints }
    }
}

/// (ordinary (id, bytes), specials (text, id)) of parsed content.
type Split = (Vec<(u32, Vec<u8>)>, Vec<(String, u32)>);

fn split_specials(c: crate::content::Content) -> PyResult<Split> {
    let mut ordinary = Vec::with_capacity(c.tokens.len());
    let mut specials = Vec::new();
    for t in c.tokens {
        if t.kind == "special" {
            let s = String::from_utf8(t.bytes).map_err(|_| value_error("a special token is not UTF-8".into()))?;
            specials.push((s, t.id));
        } else {
            ordinary.push((t.id, t.bytes));
        }
    }
    Ok((ordinary, specials))
}

#[pymethods]
impl ByteBpe {
    #[new]
    fn new(py: Python<'_>, tokens: Vec<(u32, Vec<u8>)>, specials: Vec<(String, u32)>, pattern: &str) -> PyResult<Self> {
        let split = splitter(pattern)?;
        let inner = py.allow_threads(|| RankEncoder::new(tokens, specials, split)).map_err(value_error)?;
        Ok(ByteBpe::wrap(inner))
    }

    /// Builds the encoder from canonical content bytes (see src/content.rs).
    #[staticmethod]
    fn from_content(py: Python<'_>, content: &[u8], pattern: &str) -> PyResult<Self> {
        let split = splitter(pattern)?;
        let inner = py
            .allow_threads(|| {
                let c = crate::content::parse(content)?;
                let (ordinary, specials) = split_specials(c).map_err(|e| e.to_string())?;
                RankEncoder::new(ordinary, specials, split)
            })
            .map_err(value_error)?;
        Ok(ByteBpe::wrap(inner))
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    /// The special tokens as (text, id).
    fn specials(&self) -> Vec<(String, u32)> {
        self.inner.specials()
    }

    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let ids = py.allow_threads(|| self.inner.encode_ordinary(text)).map_err(value_error)?;
        self.ints.list(py, &ids)
    }

    fn encode<'py>(&self, py: Python<'py>, text: &str, allowed_special: Vec<String>) -> PyResult<Bound<'py, PyList>> {
        let ids = py.allow_threads(|| self.inner.encode(text, &allowed_special)).map_err(value_error)?;
        self.ints.list(py, &ids)
    }

    fn find_special(&self, text: &str, names: Vec<String>) -> PyResult<Option<String>> {
        self.inner.find_special(text, &names).map_err(value_error)
    }

    #[pyo3(signature = (texts, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        threads: usize,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        let refs: Vec<&str> = texts.iter().map(|s| &**s).collect();
        let all =
            py.allow_threads(|| with_threads(threads, || self.inner.encode_batch(&refs)))?.map_err(value_error)?;
        self.ints.lists(py, &all)
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let out = self.inner.decode_bytes(&ids).map_err(|id| value_error(format!("unknown token id {id}")))?;
        Ok(PyBytes::new(py, &out))
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.inner.token_bytes(id).ok_or_else(|| value_error(format!("unknown token id {id}")))?;
        Ok(PyBytes::new(py, b))
    }

    /// (left, right, result) for every token that a merge of two lower-ranked tokens makes.
    fn merges_from_ranks(&self, py: Python<'_>) -> Vec<(u32, u32, u32)> {
        py.allow_threads(|| self.inner.merges_from_ranks())
    }

    /// Part boundaries of `piece` after merging with ranks below `max_rank` (recovers the
    /// merge that made a token: its bytes split in exactly two parts).
    fn merge_bounds(&self, piece: &[u8], max_rank: u32) -> Vec<usize> {
        self.inner.merge_bounds(piece, max_rank)
    }
}

/// Classic character-level BPE encoder over a merge table.
#[pyclass(frozen, module = "tokreg._core")]
struct CharBpe {
    inner: Arc<MergeEncoder>,
    specials: Vec<(String, u32)>,
}

#[pymethods]
impl CharBpe {
    #[new]
    #[pyo3(signature = (tokens, alphabet_size, merges, pattern, end_of_word=None, unk=None))]
    fn new(
        tokens: Vec<Vec<u8>>,
        alphabet_size: usize,
        merges: Vec<(u32, u32, u32)>,
        pattern: &str,
        end_of_word: Option<String>,
        unk: Option<u32>,
    ) -> PyResult<Self> {
        let split = splitter(pattern)?;
        let inner = MergeEncoder::new(tokens, alphabet_size, &merges, end_of_word.as_deref(), unk, split)
            .map_err(value_error)?;
        Ok(CharBpe { inner: Arc::new(inner), specials: vec![] })
    }

    /// Builds the encoder from canonical content bytes (see src/content.rs).
    #[staticmethod]
    #[pyo3(signature = (content, pattern, end_of_word=None, unk_token=None))]
    fn from_content(
        content: &[u8],
        pattern: &str,
        end_of_word: Option<String>,
        unk_token: Option<String>,
    ) -> PyResult<Self> {
        let split = splitter(pattern)?;
        let c = crate::content::parse(content).map_err(value_error)?;
        let alphabet = c.tokens.iter().take_while(|t| t.kind == "char").count();
        let unk = unk_token
            .and_then(|u| c.tokens.iter().find(|t| t.kind == "special" && t.bytes == u.as_bytes()).map(|t| t.id));
        let specials = c
            .tokens
            .iter()
            .filter(|t| t.kind == "special")
            .map(|t| (String::from_utf8_lossy(&t.bytes).into_owned(), t.id))
            .collect();
        let tokens: Vec<Vec<u8>> = c.tokens.into_iter().map(|t| t.bytes).collect();
        let inner =
            MergeEncoder::new(tokens, alphabet, &c.merges, end_of_word.as_deref(), unk, split).map_err(value_error)?;
        Ok(CharBpe { inner: Arc::new(inner), specials })
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    fn specials(&self) -> Vec<(String, u32)> {
        self.specials.clone()
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.inner.token_bytes(id).ok_or_else(|| value_error(format!("unknown token id {id}")))?;
        Ok(PyBytes::new(py, b))
    }

    fn encode_ordinary(&self, py: Python<'_>, text: &str) -> PyResult<Vec<u32>> {
        py.allow_threads(|| self.inner.encode(text)).map_err(value_error)
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let out = self.inner.decode_bytes(&ids).map_err(|id| value_error(format!("unknown token id {id}")))?;
        Ok(PyBytes::new(py, &out))
    }
}

// ---- WordPiece -------------------------------------------------------------------------------

fn bert_normalizer(
    clean_text: bool,
    handle_chinese_chars: bool,
    strip_accents: Option<bool>,
    lowercase: bool,
    unicode_form: Option<&str>,
) -> PyResult<wordpiece::BertNormalizer> {
    let mut n = wordpiece::BertNormalizer::hf(clean_text, handle_chinese_chars, strip_accents, lowercase);
    n.unicode_form = match unicode_form {
        None | Some("") | Some("none") => None,
        Some("nfc") => Some(wordpiece::Form::Nfc),
        Some("nfkc") => Some(wordpiece::Form::Nfkc),
        Some("nfd") => Some(wordpiece::Form::Nfd),
        Some("nfkd") => Some(wordpiece::Form::Nfkd),
        Some(f) => return Err(value_error(format!("unknown Unicode normalization {f:?} (nfc, nfkc, nfd, nfkd)"))),
    };
    Ok(n)
}

/// Normalizes, pre-tokenizes and counts the words of `inputs`, then learns WordPiece merges.
#[pyfunction]
#[pyo3(signature = (inputs, vocab_size, special_tokens, continuing_prefix="##", min_frequency=0,
    limit_alphabet=None, max_token_len=None, clean_text=true, handle_chinese_chars=true,
    strip_accents=None, lowercase=false, unicode_form=None, threads=0, progress=None))]
#[allow(clippy::too_many_arguments)]
fn train_wordpiece<'py>(
    py: Python<'py>,
    inputs: Vec<Bound<'py, PyBytes>>,
    vocab_size: usize,
    special_tokens: Vec<String>,
    continuing_prefix: &str,
    min_frequency: u64,
    limit_alphabet: Option<usize>,
    max_token_len: Option<usize>,
    clean_text: bool,
    handle_chinese_chars: bool,
    strip_accents: Option<bool>,
    lowercase: bool,
    unicode_form: Option<&str>,
    threads: usize,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    let norm = bert_normalizer(clean_text, handle_chinese_chars, strip_accents, lowercase, unicode_form)?;
    let cfg = wordpiece::TrainerConfig {
        vocab_size,
        min_frequency,
        continuing_prefix: continuing_prefix.to_string(),
        special_tokens,
        limit_alphabet,
        max_token_len,
    };
    let slices: Vec<&[u8]> = inputs.iter().map(|b| b.as_bytes()).collect();
    let mut prog = Progress { callback: progress, error: None };
    let result = py.allow_threads(|| {
        with_threads(threads, || {
            let t0 = Instant::now();
            let counts = count_words(&slices, &mut |d, t| prog.report("count", d, t), |line, emit| {
                let normalized = norm.normalize(line);
                wordpiece::pre_tokenize(&normalized, &mut *emit);
            })?;
            let count_seconds = t0.elapsed().as_secs_f64();
            let mut words: Vec<(String, u64)> = counts.into_iter().collect();
            words.sort_unstable();
            let t1 = Instant::now();
            let out =
                wordpiece::train(&words, &cfg, &mut |phase, d, t| phase != "merge" || prog.report("merge", d, t))?;
            Ok((out, words.len(), count_seconds, t1.elapsed().as_secs_f64()))
        })
        .map_err(|e| e.to_string())?
    });
    let (out, n_words, count_seconds, merge_seconds) = result.map_err(|e| prog.fail(e))?;
    let d = PyDict::new(py);
    d.set_item("tokens", out.tokens)?;
    let merges: Vec<(u32, u32, u32, f64, u64, u64, u64)> = out
        .merges
        .iter()
        .map(|m| (m.left, m.right, m.result, m.score, m.pair_count, m.left_count, m.right_count))
        .collect();
    d.set_item("merges", merges)?;
    d.set_item("distinct_words", n_words)?;
    d.set_item("count_seconds", count_seconds)?;
    d.set_item("merge_seconds", merge_seconds)?;
    Ok(d)
}

/// WordPiece encoder: BERT normalizer, BERT pre-tokenizer, greedy longest match.
#[pyclass(frozen, module = "tokreg._core")]
struct WordPiece {
    inner: Arc<wordpiece::Encoder>,
    norm: wordpiece::BertNormalizer,
    vocab: Vec<String>,
    prefix: String,
    specials: Vec<(String, u32)>,
    ints: IdInts,
}

#[pymethods]
impl WordPiece {
    /// Builds the encoder from canonical content bytes (tokens in id order; kind "special"
    /// marks special tokens).
    #[staticmethod]
    #[pyo3(signature = (content, unk_token, continuing_prefix="##", max_input_chars_per_word=100,
        clean_text=true, handle_chinese_chars=true, strip_accents=None, lowercase=false, unicode_form=None))]
    #[allow(clippy::too_many_arguments)]
    fn from_content(
        content: &[u8],
        unk_token: &str,
        continuing_prefix: &str,
        max_input_chars_per_word: usize,
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: Option<bool>,
        lowercase: bool,
        unicode_form: Option<&str>,
    ) -> PyResult<Self> {
        let norm = bert_normalizer(clean_text, handle_chinese_chars, strip_accents, lowercase, unicode_form)?;
        let c = crate::content::parse(content).map_err(value_error)?;
        let mut vocab = Vec::with_capacity(c.tokens.len());
        let mut specials = Vec::new();
        for (i, t) in c.tokens.into_iter().enumerate() {
            if t.id as usize != i {
                return Err(value_error("WordPiece token ids must be 0..n without gaps".into()));
            }
            let s = String::from_utf8(t.bytes).map_err(|_| value_error(format!("token {i} is not UTF-8")))?;
            if t.kind == "special" {
                specials.push((s.clone(), t.id));
            }
            vocab.push(s);
        }
        let inner = wordpiece::Encoder::new(&vocab, unk_token, continuing_prefix, max_input_chars_per_word)
            .map_err(value_error)?;
        let ints = IdInts::new(vocab.len());
        Ok(WordPiece { inner: Arc::new(inner), norm, vocab, prefix: continuing_prefix.to_string(), specials, ints })
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    fn specials(&self) -> Vec<(String, u32)> {
        self.specials.clone()
    }

    fn normalize(&self, text: &str) -> String {
        self.norm.normalize(text)
    }

    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let ids = py.allow_threads(|| self.inner.encode(&self.norm, text));
        self.ints.list(py, &ids)
    }

    #[pyo3(signature = (texts, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        threads: usize,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        self.ints.batch(py, &texts, threads, |t| self.inner.encode(&self.norm, t))
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let s = wordpiece::decode(&self.vocab, &ids, &self.prefix)
            .map_err(|id| value_error(format!("unknown token id {id}")))?;
        Ok(PyBytes::new(py, s.as_bytes()))
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyBytes>> {
        let t = self.vocab.get(id as usize).ok_or_else(|| value_error(format!("unknown token id {id}")))?;
        Ok(PyBytes::new(py, t.as_bytes()))
    }
}

// ---- Unigram -----------------------------------------------------------------------------------

fn piece_kind(name: &str) -> PyResult<unigram::PieceKind> {
    use unigram::PieceKind::*;
    Ok(match name {
        "normal" => Normal,
        "unknown" => Unknown,
        "control" => Control,
        "user_defined" => UserDefined,
        "unused" => Unused,
        "byte" => Byte,
        k => return Err(value_error(format!("unknown Unigram piece kind {k:?}"))),
    })
}

fn kind_name(k: unigram::PieceKind) -> &'static str {
    use unigram::PieceKind::*;
    match k {
        Normal => "normal",
        Unknown => "unknown",
        Control => "control",
        UserDefined => "user_defined",
        Unused => "unused",
        Byte => "byte",
    }
}

/// Counts the ▁-words of `inputs` (line by line) and trains a Unigram LM.
#[pyfunction]
#[pyo3(signature = (inputs, vocab_size, byte_fallback=false, shrinking_factor=0.75, max_piece_length=16,
    seed_size=1_000_000, em_iterations=2, unk_piece="<unk>".to_string(), control_pieces=vec![],
    user_defined=vec![], character_coverage=1.0, add_dummy_prefix=true, remove_extra_whitespaces=false,
    threads=0, progress=None))]
#[allow(clippy::too_many_arguments)]
fn train_unigram<'py>(
    py: Python<'py>,
    inputs: Vec<Bound<'py, PyBytes>>,
    vocab_size: usize,
    byte_fallback: bool,
    shrinking_factor: f64,
    max_piece_length: usize,
    seed_size: usize,
    em_iterations: usize,
    unk_piece: String,
    control_pieces: Vec<String>,
    user_defined: Vec<String>,
    character_coverage: f64,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    threads: usize,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = unigram::TrainerConfig {
        vocab_size,
        shrinking_factor,
        max_piece_length,
        seed_size,
        em_iterations,
        byte_fallback,
        unk_piece,
        control_pieces,
        user_defined,
        character_coverage,
    };
    let norm = unigram::SpNormalizer { add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces: true };
    let slices: Vec<&[u8]> = inputs.iter().map(|b| b.as_bytes()).collect();
    let mut prog = Progress { callback: progress, error: None };
    let result = py.allow_threads(|| {
        with_threads(threads, || {
            let t0 = Instant::now();
            let counts = count_words(&slices, &mut |d, t| prog.report("count", d, t), |line, emit| {
                norm.words(line, &mut String::new(), &mut *emit)
            })?;
            let count_seconds = t0.elapsed().as_secs_f64();
            let mut words: Vec<(String, u64)> = counts.into_iter().collect();
            words.sort_unstable();
            let t1 = Instant::now();
            let out = unigram::train(&words, &cfg, &mut |phase, d, t| prog.report(phase, d, t))?;
            Ok((out, words.len(), count_seconds, t1.elapsed().as_secs_f64()))
        })
        .map_err(|e| e.to_string())?
    });
    let (out, n_words, count_seconds, train_seconds) = result.map_err(|e| prog.fail(e))?;
    let d = PyDict::new(py);
    let pieces: Vec<(String, f64, &str)> =
        out.pieces.into_iter().map(|p| (p.text, p.score, kind_name(p.kind))).collect();
    d.set_item("pieces", pieces)?;
    let rounds: Vec<(u32, usize, f64)> = out.rounds.iter().map(|r| (r.round, r.vocab_size, r.log_likelihood)).collect();
    d.set_item("rounds", rounds)?;
    d.set_item("distinct_words", n_words)?;
    d.set_item("count_seconds", count_seconds)?;
    d.set_item("train_seconds", train_seconds)?;
    Ok(d)
}

/// Unigram LM encoder: SentencePiece text handling, Viterbi, n-best and sampling.
#[pyclass(frozen, module = "tokreg._core")]
struct Unigram {
    inner: Arc<unigram::Encoder>,
    norm: unigram::SpNormalizer,
    pieces: Vec<String>,
    specials: Vec<(String, u32)>,
    ints: IdInts,
}

/// Special tokens as (text, id).
type Specials = Vec<(String, u32)>;

/// The pieces of SentencePiece-style content (ids 0..n, UTF-8 texts, scores, kinds) and its
/// special pieces (control and unknown), for the Unigram and SentencePiece BPE encoders.
fn sp_pieces(content: &[u8], what: &str) -> PyResult<(Vec<unigram::Piece>, Specials)> {
    let c = crate::content::parse(content).map_err(value_error)?;
    let mut pieces = Vec::with_capacity(c.tokens.len());
    let mut specials = Vec::new();
    for (i, t) in c.tokens.into_iter().enumerate() {
        if t.id as usize != i {
            return Err(value_error(format!("{what} piece ids must be 0..n without gaps")));
        }
        let text = String::from_utf8(t.bytes).map_err(|_| value_error(format!("piece {i} is not UTF-8")))?;
        let kind = piece_kind(&t.kind)?;
        if matches!(kind, unigram::PieceKind::Control | unigram::PieceKind::Unknown) {
            specials.push((text.clone(), t.id));
        }
        pieces.push(unigram::Piece { text, score: t.score.unwrap_or(0.0), kind });
    }
    Ok((pieces, specials))
}

impl Unigram {
    fn restore(&self, ids: &[u32]) -> PyResult<Vec<u8>> {
        if let Some(&bad) = ids.iter().find(|&&i| i as usize >= self.pieces.len()) {
            return Err(value_error(format!("unknown token id {bad}")));
        }
        Ok(self.norm.restore(&self.inner.decode_pieces(ids)))
    }
}

#[pymethods]
impl Unigram {
    #[staticmethod]
    #[pyo3(signature = (content, add_dummy_prefix=true, remove_extra_whitespaces=false, escape_whitespaces=true))]
    fn from_content(
        content: &[u8],
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
    ) -> PyResult<Self> {
        let (pieces, specials) = sp_pieces(content, "Unigram")?;
        let texts: Vec<String> = pieces.iter().map(|p| p.text.clone()).collect();
        let inner = unigram::Encoder::new(&pieces).map_err(value_error)?;
        let norm = unigram::SpNormalizer { add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces };
        let ints = IdInts::new(texts.len());
        Ok(Unigram { inner: Arc::new(inner), norm, pieces: texts, specials, ints })
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        self.pieces.len()
    }

    fn specials(&self) -> Vec<(String, u32)> {
        self.specials.clone()
    }

    fn normalize(&self, text: &str) -> String {
        self.norm.normalize(text)
    }

    /// One text: the encoder's per-thread scratch buffers, so a call allocates only its result.
    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let ids = py.allow_threads(|| unigram::with_scratch(|s| self.inner.encode_text(&self.norm, text, s)));
        self.ints.list(py, &ids)
    }

    /// Texts are borrowed from the Python strings (`PyBackedStr`), not copied into `String`s,
    /// and all ids go into one flat buffer (with each text's end), not a `Vec` per text; the
    /// lists are made from it with the GIL back, from cached ints (`IdInts`) and with the
    /// cyclic GC paused (`GcPause`). `threads == 1` runs on the calling thread: a pool round
    /// trip per batch costs more than it saves. Each worker reuses one `Scratch`.
    #[pyo3(signature = (texts, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        threads: usize,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        use rayon::prelude::*;
        /// Texts per parallel task: enough to amortize a task, few enough to balance.
        const CHUNK: usize = 256;
        let encode = |texts: &[PyBackedStr], scratch: &mut unigram::Scratch| {
            let mut ids = Vec::new();
            let mut ends = Vec::with_capacity(texts.len());
            for t in texts {
                self.inner.encode_text_into(&self.norm, t, scratch, &mut ids);
                ends.push(ids.len());
            }
            (ids, ends)
        };
        let parts: Vec<(Vec<u32>, Vec<usize>)> = py.allow_threads(|| {
            if threads == 1 {
                return Ok(vec![encode(&texts, &mut unigram::Scratch::default())]);
            }
            with_threads(threads, || {
                texts.par_chunks(CHUNK).map_init(unigram::Scratch::default, |s, c| encode(c, s)).collect()
            })
        })?;
        let mut out = Vec::with_capacity(texts.len());
        let _paused = GcPause::new(py);
        for (ids, ends) in &parts {
            let mut start = 0;
            for &end in ends {
                out.push(self.ints.list(py, &ids[start..end])?);
                start = end;
            }
        }
        Ok(out)
    }

    /// The `k` best segmentations, best first, each with its total log probability.
    fn nbest(&self, py: Python<'_>, text: &str, k: usize) -> Vec<(Vec<u32>, f64)> {
        py.allow_threads(|| self.inner.nbest(&self.norm.normalize(text), k))
    }

    /// One segmentation drawn with probability proportional to P(segmentation)^alpha.
    fn sample(&self, py: Python<'_>, text: &str, alpha: f64, seed: u64) -> Vec<u32> {
        py.allow_threads(|| self.inner.sample(&self.norm.normalize(text), alpha, seed))
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.restore(&ids)?))
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyBytes>> {
        let t = self.pieces.get(id as usize).ok_or_else(|| value_error(format!("unknown token id {id}")))?;
        Ok(PyBytes::new(py, t.as_bytes()))
    }
}

// ---- SentencePiece BPE ---------------------------------------------------------------------------

/// SentencePiece BPE encoder (imported `model_type: BPE` models): SentencePiece text handling,
/// then score-driven merges (see `crate::spbpe`).
#[pyclass(frozen, module = "tokreg._core")]
struct SpBpe {
    inner: Arc<crate::spbpe::Encoder>,
    norm: unigram::SpNormalizer,
    specials: Vec<(String, u32)>,
    ints: IdInts,
}

#[pymethods]
impl SpBpe {
    #[staticmethod]
    #[pyo3(signature = (content, add_dummy_prefix=true, remove_extra_whitespaces=false, escape_whitespaces=true))]
    fn from_content(
        content: &[u8],
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
    ) -> PyResult<Self> {
        let (pieces, specials) = sp_pieces(content, "SentencePiece BPE")?;
        let inner = crate::spbpe::Encoder::new(&pieces).map_err(value_error)?;
        let norm = unigram::SpNormalizer { add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces };
        let ints = IdInts::new(inner.vocab_size());
        Ok(SpBpe { inner: Arc::new(inner), norm, specials, ints })
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    fn specials(&self) -> Vec<(String, u32)> {
        self.specials.clone()
    }

    fn normalize(&self, text: &str) -> String {
        self.norm.normalize(text)
    }

    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let ids = py.allow_threads(|| self.inner.encode(&self.norm.normalize(text)));
        self.ints.list(py, &ids)
    }

    #[pyo3(signature = (texts, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        threads: usize,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        self.ints.batch(py, &texts, threads, |t| self.inner.encode(&self.norm.normalize(t)))
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        if let Some(&bad) = ids.iter().find(|&&i| i as usize >= self.inner.vocab_size()) {
            return Err(value_error(format!("unknown token id {bad}")));
        }
        Ok(PyBytes::new(py, &self.norm.restore(&self.inner.decode_pieces(&ids))))
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyBytes>> {
        let t = self.inner.piece(id).ok_or_else(|| value_error(format!("unknown token id {id}")))?;
        Ok(PyBytes::new(py, t.as_bytes()))
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(train_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(check_pattern, m)?)?;
    m.add_class::<ByteBpe>()?;
    m.add_class::<CharBpe>()?;
    m.add_function(wrap_pyfunction!(train_wordpiece, m)?)?;
    m.add_class::<WordPiece>()?;
    m.add_function(wrap_pyfunction!(train_unigram, m)?)?;
    m.add_class::<Unigram>()?;
    m.add_class::<SpBpe>()?;
    let patterns = PyDict::new(m.py());
    for (name, regex) in PATTERNS {
        patterns.set_item(name, regex)?;
    }
    m.add("PATTERNS", patterns)?;
    Ok(())
}
