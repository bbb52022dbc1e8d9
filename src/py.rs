//! All PyO3 glue, and nothing else: converts Python values to the core's plain data and back,
//! releases the GIL around the core's work, and maps `CoreError` to tokreg's own exceptions in
//! one function (`to_py_err`).
//!
//! The module is a short list: `PATTERNS`, `check_pattern`, `merges_from_ranks`, the corpus
//! `Counter` and its result `Counts`, one `train_*` / `extend_*` function per trainer (counts
//! and options in, a frozen result class with typed getters out: `BpeTrained`, `BpeExtended`,
//! `WordPieceTrained`, `WordPieceExtended`, `UnigramTrained`), and one class, `Encoder`, around any algorithm's
//! `encode::Tokenizer`, with one constructor per algorithm.
//!
//! Speed tricks that live here because they are about Python objects: result lists are made
//! from cached Python ints (`IdInts`) with the cyclic GC paused (`GcPause`), and batches borrow
//! the Python strings (`PyBackedStr`) instead of copying them.

use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyType};

use crate::content;
use crate::encode::table::Backing;
use crate::encode::{Draw, Flat, Method, Rule, StreamDecoder, Tokenizer};
use crate::error::CoreError;
use crate::pretok::{canonical, Splitter, PATTERNS};
use crate::{bpe, count, documents, normalize, pool, tokreg_file, unigram, wordpiece};

/// The one mapping from core errors to Python exceptions, all from `tokreg.errors`:
/// `Interrupted` for `CoreError::Interrupted`, `VocabularySizeError` (an `InputError`) for a
/// vocabulary size out of reach, with its numbers as attributes (`requested`, and `needed` or
/// `reachable`) for callers that word their own message, and `InputError` for everything else
/// (bad input, unknown ids, unsupported operations, patterns).
fn to_py_err(py: Python<'_>, e: CoreError) -> PyErr {
    static INPUT_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();
    static VOCAB_SIZE: GILOnceCell<Py<PyType>> = GILOnceCell::new();
    static INTERRUPTED: GILOnceCell<Py<PyType>> = GILOnceCell::new();
    static REFUSED: GILOnceCell<Py<PyType>> = GILOnceCell::new();
    if let CoreError::Refused { token, index } = e {
        // Its message is worded in Python (errors.py), with the token as Python writes it.
        return match REFUSED.import(py, "tokreg.errors", "SpecialTokenError").and_then(|c| c.call1((token, index))) {
            Ok(exc) => PyErr::from_value(exc),
            Err(err) => err,
        };
    }
    let (cell, name) = match e {
        CoreError::Interrupted => (&INTERRUPTED, "Interrupted"),
        CoreError::VocabTooSmall { .. } | CoreError::VocabTooLarge { .. } => (&VOCAB_SIZE, "VocabularySizeError"),
        _ => (&INPUT_ERROR, "InputError"),
    };
    let made = cell.import(py, "tokreg.errors", name).and_then(|class| {
        let exc = class.call1((e.to_string(),))?;
        match e {
            CoreError::VocabTooSmall { requested, needed, .. } => {
                exc.setattr("requested", requested)?;
                exc.setattr("needed", needed)?;
            }
            CoreError::VocabTooLarge { requested, reachable } => {
                exc.setattr("requested", requested)?;
                exc.setattr("reachable", reachable)?;
            }
            _ => {}
        }
        Ok(exc)
    });
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

/// `?` for core results: `.or_raise(py)?` raises through `to_py_err`.
/// SentencePiece's text handling from a model's settings: the flags, the normalization rules
/// (a precompiled charsmap, checked here) and the denormalizer (charsmap, add_dummy_prefix,
/// remove_extra_whitespaces, escape_whitespaces).
fn sp_normalizer(
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    charsmap: Option<&[u8]>,
    denormalizer: Option<(Vec<u8>, bool, bool, bool)>,
) -> Result<normalize::SpNormalizer, CoreError> {
    let rules = |blob: &[u8]| normalize::CharsMap::new(blob).map(std::sync::Arc::new);
    let denormalizer = match denormalizer {
        None => None,
        Some((blob, add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces)) => {
            Some(std::sync::Arc::new(normalize::SpNormalizer {
                add_dummy_prefix,
                remove_extra_whitespaces,
                escape_whitespaces,
                charsmap: Some(rules(&blob)?),
                ..Default::default()
            }))
        }
    };
    Ok(normalize::SpNormalizer {
        add_dummy_prefix,
        remove_extra_whitespaces,
        escape_whitespaces,
        charsmap: charsmap.map(rules).transpose()?,
        denormalizer,
        ..Default::default()
    })
}

trait OrRaise<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, CoreError> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py_err(py, e))
    }
}

/// A Python buffer a thawed encoder reads its tables from (`Encoder.thaw`), or a frame of input
/// `encode_documents` reads in place.
struct Exported(pyo3::buffer::PyBuffer<u8>);

// SAFETY: `Encoder.thaw` and `read_only` wrap only read-only, C-contiguous byte buffers (they
// check both). While
// the buffer is exported (until this value drops), its exporter may not free, move or resize
// it (an `mmap` refuses to close, a `bytes` is immutable), and Python code cannot write to a
// read-only buffer. A memory map can still change if another process writes its file in place:
// the cache never does (tokreg/encoding/built_cache.py states the rule).
unsafe impl Backing for Exported {
    fn bytes(&self) -> &[u8] {
        // SAFETY: as above: `len_bytes` readable bytes at `buf_ptr`, in place while exported.
        unsafe { std::slice::from_raw_parts(self.0.buf_ptr() as *const u8, self.0.len_bytes()) }
    }
}

/// Batches of at least this many ids fill their lists on the pool's threads
/// (`IdInts::lists_in_pool`); below it the calling thread's loop costs less than a pool round.
const POOL_FILL_IDS: usize = 1 << 16;
/// Most tasks of that fill: each counts its ids in a table of 4 bytes per id of the vocabulary.
const POOL_FILL_TASKS: usize = 8;

/// A new list's item array, written by one pool task while no Python code can reach the list.
#[derive(Clone, Copy)]
struct Slots(*mut *mut pyo3::ffi::PyObject);

// SAFETY: each list's slots are written by one task only, and read by no one until every task
// is done (`IdInts::lists_in_pool`).
unsafe impl Send for Slots {}
unsafe impl Sync for Slots {}

/// Python ints for the token ids of one encoder, each made the first time an encode returns
/// it: turning a result into a list then costs a reference-count increment per id instead of
/// allocating an int object (CPython caches only -5..=256). Seen from Python that is about half
/// the time of encoding English text, so it is worth its memory (8 bytes per id, plus 32 per
/// id seen: at most 8 MB for o200k).
///
/// One flat table of object pointers indexed by id (null until made), taken zeroed from the
/// allocator: a fresh encoder's first call faults in the pages of the ids it returns, not the
/// whole table (o200k's 1.6 MB up front would be 400 page faults). An id costs one load, one
/// increment and one store into the list, where the lazily made blocks of `GILOnceCell`s this
/// replaces cost a block lookup, a `OnceLock` check and a cell check more.
struct IdInts {
    /// id -> its int, a strong reference owned by the table, or null
    cells: Box<[std::sync::atomic::AtomicPtr<pyo3::ffi::PyObject>]>,
}

impl IdInts {
    fn new(bound: usize) -> IdInts {
        type Cell = std::sync::atomic::AtomicPtr<pyo3::ffi::PyObject>;
        if bound == 0 {
            return IdInts { cells: Box::new([]) };
        }
        let layout = std::alloc::Layout::array::<Cell>(bound).expect("a table that fits memory");
        // SAFETY: the layout is not empty; the allocation has room for `bound` cells, aligned,
        // all of whose bytes are zero, which is a null `AtomicPtr` (it has the bit validity of
        // `*mut T`); the box frees it with the same layout (a slice of `bound` cells).
        let cells = unsafe {
            let ptr = std::alloc::alloc_zeroed(layout) as *mut Cell;
            if ptr.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, bound))
        };
        IdInts { cells }
    }

    /// A new strong reference to the int `i`.
    #[inline(always)]
    fn int(&self, py: Python<'_>, i: u32) -> PyResult<*mut pyo3::ffi::PyObject> {
        use std::sync::atomic::Ordering::Acquire;
        let Some(cell) = self.cells.get(i as usize) else { return Self::fresh(py, i) };
        let p = cell.load(Acquire);
        if p.is_null() {
            return self.make(py, cell, i);
        }
        // SAFETY: a non-null cell holds a live int the table owns a reference to; the GIL is held.
        unsafe { pyo3::ffi::Py_INCREF(p) };
        Ok(p)
    }

    /// A new int object for `i`.
    fn fresh(py: Python<'_>, i: u32) -> PyResult<*mut pyo3::ffi::PyObject> {
        // SAFETY: the GIL is held (`py`); NULL (with an exception set) is turned into the error.
        let p = unsafe { pyo3::ffi::PyLong_FromUnsignedLong(i.into()) };
        if p.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok(p)
    }

    /// Makes the int for `i`, keeps one reference in `cell` and returns another. Two threads of
    /// a free-threaded interpreter may both make it: the first store wins and the other's copy
    /// is released.
    #[cold]
    fn make(
        &self,
        py: Python<'_>,
        cell: &std::sync::atomic::AtomicPtr<pyo3::ffi::PyObject>,
        i: u32,
    ) -> PyResult<*mut pyo3::ffi::PyObject> {
        use std::sync::atomic::Ordering::{AcqRel, Acquire};
        let p = Self::fresh(py, i)?;
        // SAFETY (both arms): the GIL is held; `p` is our new reference and `other` a live int
        // the table owns.
        match cell.compare_exchange(std::ptr::null_mut(), p, AcqRel, Acquire) {
            Ok(_) => unsafe { pyo3::ffi::Py_INCREF(p) },
            Err(other) => unsafe {
                pyo3::ffi::Py_DECREF(p);
                pyo3::ffi::Py_INCREF(other);
                return Ok(other);
            },
        }
        Ok(p)
    }

    /// A new list of the ids' ints. Made with `PyList_New` and filled slot by slot: PyO3's
    /// `PyList::new` goes through a `dyn Iterator` of `PyResult`s, which cost more per id than
    /// the id itself (a list of 16k ids from a stream of prose: 18 ns an id, a quarter of the
    /// time of `encode` seen from Python).
    fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let len = pyo3::ffi::Py_ssize_t::try_from(ids.len()).expect("a list shorter than isize::MAX");
        // SAFETY: the GIL is held (`py`). `PyList_New(len)` returns a new list of `len` empty
        // slots, or NULL with an exception set (which `from_owned_ptr_or_err` turns into an
        // error); every slot is then set exactly once to a new strong reference, which the
        // list steals, before the list is handed to Python (on an error, the list is dropped
        // with its empty slots, which a list's deallocation skips).
        unsafe {
            let list = Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(len))?;
            for (k, &i) in ids.iter().enumerate() {
                pyo3::ffi::PyList_SET_ITEM(list.as_ptr(), k as pyo3::ffi::Py_ssize_t, self.int(py, i)?);
            }
            Ok(list.downcast_into_unchecked())
        }
    }

    /// One list per text of the flat buffers, with Python's cyclic GC paused meanwhile: every
    /// new list counts toward a collection, and collections triggered by 200k fresh lists
    /// (which cannot form cycles) traverse all of them again and again; that was a quarter of
    /// a batch's time.
    fn lists<'py>(&self, py: Python<'py>, parts: &[Flat]) -> PyResult<Vec<Bound<'py, PyList>>> {
        let _paused = GcPause::new(py);
        let mut out = Vec::with_capacity(parts.iter().map(|p| p.ends.len()).sum());
        for ids in parts.iter().flat_map(Flat::texts) {
            out.push(self.list(py, ids)?);
        }
        Ok(out)
    }

    /// `lists`, with the lists' slots filled on `threads` threads (the GIL released) when the
    /// batch holds at least `POOL_FILL_IDS` ids.
    ///
    /// Why: `lists` fills every slot on the calling thread, with the GIL held, while the pool
    /// that encoded the batch stands idle; for the 24 MB batch of the peer benchmark (6.2M ids
    /// with o200k) that was 55-65 ms of a fresh process's batch (the ints, an increment per id,
    /// and the first touch of the lists' 50 MB of slots). Here: (1) the lists are made with
    /// their slots empty; (2) the threads mark which ids the batch holds; (3) the ints of those
    /// not made yet are made, with the GIL; (4) the threads store each id's int in its slots
    /// and count how often they used each one; (5) each int gets its count of references, with
    /// the GIL. Between (4) and (5) a slot holds an int without its reference, which is safe:
    /// no Python code can reach the new lists yet, and the table keeps every int alive.
    fn lists_in_pool<'py>(&self, py: Python<'py>, parts: &[Flat], threads: usize) -> PyResult<Vec<Bound<'py, PyList>>> {
        use rayon::prelude::*;
        use std::sync::atomic::Ordering::Acquire;
        let texts: Vec<&[u32]> = parts.iter().flat_map(Flat::texts).collect();
        let total: usize = texts.iter().map(|t| t.len()).sum();
        let bound = self.cells.len();
        if threads == 1 || total < POOL_FILL_IDS || total > u32::MAX as usize || bound == 0 {
            return self.lists(py, parts);
        }
        let _paused = GcPause::new(py);
        // 1. The lists, every slot empty (NULL).
        let mut lists = Vec::with_capacity(texts.len());
        let mut slots = Vec::with_capacity(texts.len());
        for ids in &texts {
            let len = pyo3::ffi::Py_ssize_t::try_from(ids.len()).expect("a list shorter than isize::MAX");
            // SAFETY: the GIL is held. `PyList_New(len)` returns a new list of `len` NULL slots
            // (or NULL with an exception set, turned into the error); its item array is the
            // `ob_item` of a `PyListObject`. A list dropped with NULL slots skips them. The list
            // is taken off the cyclic GC's books until it is complete (step 5): while the GIL
            // is released, another thread's `gc.get_objects()` could otherwise reach a list
            // whose slots are being written or hold ints without their reference yet.
            unsafe {
                let list = Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(len))?;
                pyo3::ffi::PyObject_GC_UnTrack(list.as_ptr().cast());
                slots.push(Slots((*(list.as_ptr() as *mut pyo3::ffi::PyListObject)).ob_item));
                lists.push(list.downcast_into_unchecked::<PyList>());
            }
        }
        let runs = |k: usize| -> Vec<std::ops::Range<usize>> {
            // Runs of consecutive texts of about total / k ids each.
            let (mut out, mut start, mut seen) = (Vec::with_capacity(k), 0, 0);
            for (t, ids) in texts.iter().enumerate() {
                seen += ids.len();
                if seen * k >= total * (out.len() + 1) {
                    out.push(start..t + 1);
                    start = t + 1;
                }
            }
            if start < texts.len() {
                out.push(start..texts.len());
            }
            out
        };
        let tasks = || runs(rayon::current_num_threads().clamp(1, POOL_FILL_TASKS));
        // 2. Which ids the batch holds; None if one is beyond the table (then `lists` does it all).
        let marks: Option<Vec<u64>> = py
            .allow_threads(|| {
                pool::install(threads, || {
                    tasks()
                        .into_par_iter()
                        .map(|run| -> Option<Vec<u64>> {
                            let mut bits = vec![0u64; bound.div_ceil(64)];
                            for &i in texts[run].iter().copied().flatten() {
                                let i = i as usize;
                                if i >= bound {
                                    return None;
                                }
                                bits[i / 64] |= 1 << (i % 64);
                            }
                            Some(bits)
                        })
                        .reduce(
                            || Some(vec![0u64; bound.div_ceil(64)]),
                            |a, b| match (a, b) {
                                (Some(mut a), Some(b)) => {
                                    a.iter_mut().zip(&b).for_each(|(x, y)| *x |= y);
                                    Some(a)
                                }
                                _ => None,
                            },
                        )
                })
            })
            .or_raise(py)?;
        let Some(marks) = marks else {
            drop(lists);
            return self.lists(py, parts);
        };
        // 3. The ints not made yet.
        for (w, &word) in marks.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let cell = &self.cells[i];
                if cell.load(Acquire).is_null() {
                    let p = self.make(py, cell, i as u32)?;
                    // SAFETY: the GIL is held; `make` returned a reference beside the table's.
                    unsafe { pyo3::ffi::Py_DECREF(p) };
                }
            }
        }
        // 4. The slots, and how often each int went in one.
        let slots = &slots;
        let counts: Vec<Vec<u32>> = py
            .allow_threads(|| {
                pool::install(threads, || {
                    tasks()
                        .into_par_iter()
                        .map(|run| {
                            let mut counts = vec![0u32; bound];
                            for t in run {
                                let out = slots[t].0;
                                for (j, &i) in texts[t].iter().enumerate() {
                                    // SAFETY: every id is below `bound` (step 2) and its int made
                                    // (step 3); slot j of text t's list exists (its length is
                                    // the text's id count) and only this task writes it.
                                    unsafe { *out.add(j) = self.cells.get_unchecked(i as usize).load(Acquire) };
                                    counts[i as usize] += 1;
                                }
                            }
                            counts
                        })
                        .collect()
                })
            })
            .or_raise(py)?;
        // 5. Each int's references, for the slots that hold it.
        for c in &counts {
            for (i, &n) in c.iter().enumerate().filter(|(_, &n)| n > 0) {
                let p = self.cells[i].load(Acquire);
                for _ in 0..n {
                    // SAFETY: the GIL is held; `p` is a live int the table owns.
                    unsafe { pyo3::ffi::Py_INCREF(p) };
                }
            }
        }
        for list in &lists {
            // SAFETY: the GIL is held; every slot holds a referenced int: the GC may see it now.
            unsafe { pyo3::ffi::PyObject_GC_Track(list.as_ptr().cast()) };
        }
        Ok(lists)
    }
}

impl Drop for IdInts {
    /// Releases the table's ints (an encoder is dropped by Python, with the GIL held; `with_gil`
    /// takes it otherwise).
    fn drop(&mut self) {
        let made = |c: &std::sync::atomic::AtomicPtr<pyo3::ffi::PyObject>| {
            Some(c.load(std::sync::atomic::Ordering::Acquire)).filter(|p| !p.is_null())
        };
        if !self.cells.iter().any(|c| made(c).is_some()) {
            return;
        }
        Python::with_gil(|_py| {
            for c in self.cells.iter() {
                if let Some(p) = made(c) {
                    // SAFETY: the GIL is held; the table owns this reference.
                    unsafe { pyo3::ffi::Py_DECREF(p) };
                }
            }
        });
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

/// Reports progress to an optional Python callable and notices Ctrl-C. Called from the thread
/// that runs the training (the GIL released); it takes the GIL back for the duration of the call.
struct Progress {
    callback: Option<PyObject>,
    /// What the callback (or the signal check) raised: the run stops, and this is re-raised.
    error: Option<PyErr>,
}

impl Progress {
    fn new(callback: Option<PyObject>) -> Progress {
        Progress { callback, error: None }
    }

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

    /// The exception for a failed run: the Python exception that stopped it, unchanged (e.g.
    /// `KeyboardInterrupt`), else the core's error.
    fn fail(&mut self, py: Python<'_>, e: CoreError) -> PyErr {
        self.error.take().unwrap_or_else(|| to_py_err(py, e))
    }
}

/// Checks that a pre-tokenizer pattern compiles (raising InputError with the reason if not);
/// returns its canonical spelling (a known alias of a built-in becomes the built-in).
/// How many times byte `b` occurs in `data` (line numbers of large buffers), the GIL released.
/// `data`: any read-only contiguous byte buffer (bytes, a view of a read-only memory map).
#[pyfunction]
fn count_byte(py: Python<'_>, data: &Bound<'_, PyAny>, b: u8) -> PyResult<usize> {
    let data = read_only(py, data)?;
    Ok(py.allow_threads(|| documents::count_byte(data.bytes(), b)))
}

/// `data`'s bytes in place, for reading with the GIL released: refused unless read-only and
/// contiguous (nothing can then change them while exported).
fn read_only(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Exported> {
    let buf = pyo3::buffer::PyBuffer::<u8>::get(data)?;
    if !buf.is_c_contiguous() || !buf.readonly() {
        return Err(CoreError::input("expected a read-only contiguous byte buffer (bytes, a read-only mmap)"))
            .or_raise(py);
    }
    Ok(Exported(buf))
}

/// On SIGBUS (a memory-mapped file cut short by another program), write `line` to stderr and
/// exit with `status` at once: the console script's one line instead of a bare "Bus error".
#[pyfunction]
fn say_and_exit_on_bus_error(line: &[u8], status: i32) -> PyResult<()> {
    crate::bus_error::say_and_exit_on_bus_error(line, status).map_err(Into::into)
}

/// From the next training on, blocks from 128 KB up are mapped apart from the heap for the rest
/// of the process (memory.rs, `map_large_blocks`): for a process that ends after training.
#[pyfunction]
fn map_large_blocks_in_training() {
    crate::memory::want_large_blocks_mapped()
}

#[pyfunction]
fn check_pattern(py: Python<'_>, pattern: &str) -> PyResult<String> {
    Splitter::new(pattern).or_raise(py)?;
    Ok(canonical(pattern).to_string())
}

/// (left, right, result) per token of a byte-level rank map that a merge of two lower-ranked
/// tokens makes, in rank order. `tokens`: (id, bytes) of the ordinary tokens.
/// The JSON header line of canonical content (`tokreg-content-v1`), its format checked.
#[pyfunction]
fn content_header(py: Python<'_>, content: &[u8]) -> PyResult<String> {
    content::header(content).map(str::to_string).or_raise(py)
}

/// The token records of canonical content (`content::push_record`) for tokens given as
/// columns in id order (id, kind, bytes, score), and their number: content.py's `serialize`
/// writes a token a few nanoseconds this way instead of a microsecond a token in Python.
#[pyfunction]
fn content_records<'py>(
    py: Python<'py>,
    ids: Vec<i64>,
    kinds: Vec<PyBackedStr>,
    raws: Vec<PyBackedBytes>,
    scores: Vec<Option<f64>>,
) -> PyResult<(usize, Bound<'py, PyBytes>)> {
    let n = ids.len();
    if kinds.len() != n || raws.len() != n || scores.len() != n {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "ids, kinds, raws and scores must be columns of one length",
        ));
    }
    let mut out = Vec::with_capacity(raws.iter().map(|r| r.len() + 24).sum());
    for i in 0..n {
        content::push_record(&mut out, ids[i], &kinds[i], &raws[i], scores[i]).or_raise(py)?;
    }
    Ok((n, PyBytes::new(py, &out)))
}

/// The tokens (id, kind, bytes, score) in id order and merges (left, right, result) in rank
/// order of canonical content.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn content_rows<'py>(
    py: Python<'py>,
    content: &[u8],
) -> PyResult<(Vec<(u32, Bound<'py, PyString>, Bound<'py, PyBytes>, Option<f64>)>, Vec<(u32, u32, u32)>)> {
    let c = content::parse(content).or_raise(py)?;
    // Kinds are a handful of short names: one str object each, shared by their tokens.
    let mut kinds: Vec<(&str, Bound<'py, PyString>)> = Vec::new();
    let mut tokens = Vec::with_capacity(c.tokens.len());
    for t in &c.tokens {
        let kind = match kinds.iter().find(|(k, _)| *k == t.kind) {
            Some((_, s)) => s.clone(),
            None => {
                let s = PyString::new(py, t.kind);
                kinds.push((t.kind, s.clone()));
                s
            }
        };
        tokens.push((t.id, kind, PyBytes::new(py, t.bytes), t.score));
    }
    Ok((tokens, c.merges))
}

/// The members of a tokreg file's top-level object: (key, start, end) of each value.
#[pyfunction]
fn tokreg_file_members(py: Python<'_>, raw: &[u8]) -> PyResult<Vec<(String, usize, usize)>> {
    py.allow_threads(|| tokreg_file::members(raw)).or_raise(py)
}

/// A tokreg file's `tokens` and `merges` arrays at the spans of `raw` given: (number of tokens,
/// canonical token records, number of merges, u32 LE triples).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn tokreg_file_rows<'py>(
    py: Python<'py>,
    raw: &[u8],
    tokens: (usize, usize),
    merges: (usize, usize),
) -> PyResult<(usize, Bound<'py, PyBytes>, usize, Bound<'py, PyBytes>)> {
    let ((n, records), (m, triples)) = py
        .allow_threads(|| {
            let t = tokreg_file::token_records(raw, tokens.0, tokens.1)?;
            Ok::<_, CoreError>((t, tokreg_file::merge_triples(raw, merges.0, merges.1)?))
        })
        .or_raise(py)?;
    Ok((n, PyBytes::new(py, &records), m, PyBytes::new(py, &triples)))
}

#[pyfunction]
fn merges_from_ranks(py: Python<'_>, tokens: Vec<(u32, PyBackedBytes)>) -> PyResult<Vec<(u32, u32, u32)>> {
    py.allow_threads(|| {
        let tokens = tokens.iter().map(|(id, b)| (*id, b.to_vec())).collect();
        bpe::merges_from_ranks(tokens)
    })
    .or_raise(py)
}

/// A corpus counter (`count::Counter`): fed chunks of bytes, one input at a time, with the GIL
/// released; `finish` gives the `Counts`. One constructor per way of cutting lines.
#[pyclass(module = "tokreg._core")]
struct Counter {
    inner: Option<count::AnyCounter>,
    threads: usize,
}

fn spill_dir(dir: Option<String>) -> std::path::PathBuf {
    dir.map(Into::into).unwrap_or_else(std::env::temp_dir)
}

impl Counter {
    fn make(
        split: count::Splitting,
        max_piece_bytes: usize,
        table_budget: usize,
        dir: Option<String>,
        threads: usize,
    ) -> Counter {
        let c = count::Counter::new(split, max_piece_bytes, table_budget, spill_dir(dir));
        Counter { inner: Some(count::AnyCounter::Shared(c)), threads }
    }

    fn live(&mut self, py: Python<'_>) -> PyResult<&mut count::AnyCounter> {
        self.inner.as_mut().ok_or_else(|| to_py_err(py, CoreError::input("this counter is finished; make a new one")))
    }
}

#[pymethods]
impl Counter {
    /// BPE: the pieces of a pre-tokenizer pattern.
    #[staticmethod]
    #[pyo3(signature = (pattern, max_piece_bytes=0, table_budget=usize::MAX, spill_dir=None, threads=0))]
    fn pieces(
        py: Python<'_>,
        pattern: &str,
        max_piece_bytes: usize,
        table_budget: usize,
        spill_dir: Option<String>,
        threads: usize,
    ) -> PyResult<Counter> {
        let splitter = Splitter::new(pattern).or_raise(py)?;
        Ok(Counter::make(count::Splitting::Pieces(splitter), max_piece_bytes, table_budget, spill_dir, threads))
    }

    /// Superword BPE: runs of up to `max_words` pieces of a pattern (`bpe::superword`), counted
    /// by `count::RunCounter`.
    #[staticmethod]
    #[pyo3(signature = (pattern, max_words, table_budget=usize::MAX, spill_dir=None, threads=0))]
    fn superword(
        py: Python<'_>,
        pattern: &str,
        max_words: usize,
        table_budget: usize,
        spill_dir: Option<String>,
        threads: usize,
    ) -> PyResult<Counter> {
        let splitter = Splitter::new(pattern).or_raise(py)?;
        let c = count::RunCounter::new(splitter, max_words, table_budget, self::spill_dir(spill_dir));
        Ok(Counter { inner: Some(count::AnyCounter::Runs(c)), threads })
    }

    /// WordPiece: BERT normalization and pre-tokenization.
    #[staticmethod]
    #[pyo3(signature = (clean_text=true, handle_chinese_chars=true, strip_accents=None, lowercase=false,
        unicode_form=None, max_piece_bytes=0, table_budget=usize::MAX, spill_dir=None, threads=0))]
    #[allow(clippy::too_many_arguments)]
    fn bert(
        py: Python<'_>,
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: Option<bool>,
        lowercase: bool,
        unicode_form: Option<&str>,
        max_piece_bytes: usize,
        table_budget: usize,
        spill_dir: Option<String>,
        threads: usize,
    ) -> PyResult<Counter> {
        let norm =
            bert_normalizer(clean_text, handle_chinese_chars, strip_accents, lowercase, unicode_form).or_raise(py)?;
        Ok(Counter::make(wordpiece::splitting(norm), max_piece_bytes, table_budget, spill_dir, threads))
    }

    /// Unigram: SentencePiece's whitespace handling and `▁`-words.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (add_dummy_prefix=true, remove_extra_whitespaces=false, max_piece_bytes=0,
        table_budget=usize::MAX, spill_dir=None, threads=0, charsmap=None, user_defined=Vec::new(),
        split_by_whitespace=true, line_ends=false))]
    fn sentencepiece(
        py: Python<'_>,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        max_piece_bytes: usize,
        table_budget: usize,
        spill_dir: Option<String>,
        threads: usize,
        charsmap: Option<&[u8]>,
        user_defined: Vec<String>,
        split_by_whitespace: bool,
        line_ends: bool,
    ) -> PyResult<Counter> {
        let norm = sp_normalizer(add_dummy_prefix, remove_extra_whitespaces, true, charsmap, None)
            .or_raise(py)?
            .with_user_defined(user_defined);
        let splitting = unigram::splitting(norm, split_by_whitespace, line_ends);
        Ok(Counter::make(splitting, max_piece_bytes, table_budget, spill_dir, threads))
    }

    /// Counts the complete lines of `data` (the GIL released, on the counter's threads).
    fn feed(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        let threads = self.threads;
        let c = self.live(py)?;
        py.allow_threads(|| pool::install(threads, || c.feed(data))?).or_raise(py)
    }

    /// Ends one input (its last line need not end with a newline).
    fn end_input(&mut self, py: Python<'_>) -> PyResult<()> {
        let threads = self.threads;
        let c = self.live(py)?;
        py.allow_threads(|| pool::install(threads, || c.end_input())?).or_raise(py)
    }

    /// Bytes fed so far.
    #[getter]
    fn input_bytes(&self) -> u64 {
        self.inner.as_ref().map_or(0, |c| c.input_bytes())
    }

    /// (distinct pieces in memory, runs spilled to disk so far).
    #[getter]
    fn table_size(&self) -> (usize, usize) {
        self.inner.as_ref().map_or((0, 0), |c| c.table_size())
    }

    /// The counts; with `keep_budget` (bytes), the budget rule keeps the most frequent pieces.
    #[pyo3(signature = (keep_budget=None))]
    fn finish(&mut self, py: Python<'_>, keep_budget: Option<usize>) -> PyResult<Counts> {
        let threads = self.threads;
        let c = self.inner.take().ok_or_else(|| to_py_err(py, CoreError::input("this counter is finished")))?;
        let counts = py.allow_threads(|| pool::install(threads, || c.finish(keep_budget))?).or_raise(py)?;
        py.allow_threads(crate::memory::give_back_memory);
        Ok(Counts { inner: counts })
    }
}

/// Counted pieces (`count::Counts`): sorted by bytes, 64-bit counts, what the budget dropped.
#[pyclass(frozen, module = "tokreg._core")]
struct Counts {
    inner: count::Counts,
}

#[pymethods]
impl Counts {
    /// From the binary form `to_bytes` wrote (checked: sorted, no empty piece, no zero count).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, raw: &[u8]) -> PyResult<Counts> {
        Ok(Counts { inner: py.allow_threads(|| count::Counts::from_bytes(raw)).or_raise(py)? })
    }

    /// From (piece, count) pairs in any order (equal pieces add up), e.g. for tests.
    #[staticmethod]
    fn from_pairs(mut pairs: Vec<(Vec<u8>, u64)>) -> Counts {
        pairs.sort();
        let mut merged: Vec<(Vec<u8>, u64)> = Vec::with_capacity(pairs.len());
        for (p, n) in pairs {
            match merged.last_mut() {
                Some(last) if last.0 == p => last.1 = last.1.saturating_add(n),
                _ => merged.push((p, n)),
            }
        }
        merged.retain(|(p, n)| !p.is_empty() && *n > 0);
        let total = merged.iter().map(|e| e.1).fold(0u64, u64::saturating_add);
        let stats = count::CountStats { total, ..Default::default() };
        Counts { inner: count::Counts::from_sorted(merged.into_iter(), stats) }
    }

    /// The binary form (see src/count/counts.rs).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let raw = py.allow_threads(|| self.inner.to_bytes());
        PyBytes::new(py, &raw)
    }

    /// The sum of several counts.
    #[staticmethod]
    fn sum(py: Python<'_>, parts: Vec<PyRef<'_, Counts>>) -> Counts {
        let refs: Vec<&count::Counts> = parts.iter().map(|p| &p.inner).collect();
        Counts { inner: py.allow_threads(|| count::Counts::sum(&refs)) }
    }

    /// These counts with the budget rule applied for `budget` bytes of training memory.
    fn keep_within(&self, py: Python<'_>, budget: usize) -> Counts {
        Counts { inner: py.allow_threads(|| self.inner.clone().keep_within(budget)) }
    }

    /// Estimated training memory of these pieces, in bytes (the budget rule's measure).
    #[getter]
    fn estimate(&self) -> usize {
        self.inner.estimate()
    }

    /// What was counted and what the budget dropped (`CountStats`).
    #[getter]
    fn stats(&self) -> CountStats {
        let s = &self.inner.stats;
        CountStats {
            pieces: self.inner.len(),
            total: s.total,
            kept_total: self.inner.kept_total(),
            dropped_pieces: s.dropped_pieces,
            dropped_total: s.dropped_total,
            input_bytes: s.input_bytes,
            lines: s.lines,
            spilled_runs: s.spilled_runs,
        }
    }

    /// The first `limit` (piece, count) pairs in byte order (all with None).
    #[pyo3(signature = (limit=None))]
    fn items<'py>(&self, py: Python<'py>, limit: Option<usize>) -> Vec<(Bound<'py, PyBytes>, u64)> {
        self.inner.iter().take(limit.unwrap_or(usize::MAX)).map(|(p, n)| (PyBytes::new(py, p), n)).collect()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __eq__(&self, other: PyRef<'_, Counts>) -> bool {
        self.inner.same_pieces(&other.inner)
    }
}

/// The numbers of a `Counts`: distinct pieces kept and the occurrences counted (`total`, the
/// dropped ones included) and kept, what the budget rule dropped, the input read, and the runs
/// spilled to disk while counting (0: it fitted in memory).
#[pyclass(frozen, get_all, module = "tokreg._core")]
struct CountStats {
    pieces: usize,
    total: u64,
    kept_total: u64,
    dropped_pieces: u64,
    dropped_total: u64,
    input_bytes: u64,
    lines: u64,
    spilled_runs: u64,
}

/// A round trip's totals as Python sees them: (lines, lost lines, tokens, unknown ids, bytes,
/// lines that are not UTF-8).
type RoundTripTotals = (u64, u64, u64, u64, u64, u64);

/// A BPE merge as Python sees it: (left, right, result, pair count when chosen).
type PyBpeMerge = (u32, u32, u32, u64);

/// What `train_bpe` learned: every token of the largest size in id order (the base alphabet
/// first), their uses in the final segmentation, the merges in rank order, and one
/// (tokens, merges, token counts) per size asked in `snapshots`. Each getter makes its Python
/// list anew: read it once.
#[pyclass(frozen, module = "tokreg._core")]
struct BpeTrained {
    tokens: Vec<Vec<u8>>,
    token_counts: Vec<u64>,
    merges: Vec<PyBpeMerge>,
    snapshots: Vec<(usize, usize, Vec<u64>)>,
    #[pyo3(get)]
    alphabet_size: usize,
    #[pyo3(get)]
    distinct_pieces: usize,
    #[pyo3(get)]
    merge_seconds: f64,
}

impl BpeTrained {
    /// A run of the core's merge loop as Python reads it.
    fn of(trained: bpe::TrainOutput, alphabet_size: usize, distinct_pieces: usize, merge_seconds: f64) -> Self {
        BpeTrained {
            merges: trained.merges.iter().map(|m| (m.left, m.right, m.result, m.count)).collect(),
            snapshots: trained.snapshots.into_iter().map(|s| (s.tokens, s.merges, s.token_counts)).collect(),
            tokens: trained.tokens,
            token_counts: trained.token_counts,
            alphabet_size,
            distinct_pieces,
            merge_seconds,
        }
    }
}

#[pymethods]
impl BpeTrained {
    #[getter]
    fn tokens<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        self.tokens.iter().map(|t| PyBytes::new(py, t)).collect()
    }

    #[getter]
    fn token_counts(&self) -> Vec<u64> {
        self.token_counts.clone()
    }

    #[getter]
    fn merges(&self) -> Vec<PyBpeMerge> {
        self.merges.clone()
    }

    /// The merges as four columns of little-endian numbers in rank order: left, right and
    /// result (u32 each) and count (u64), for Python's `array` (no tuple or int per merge).
    #[getter]
    #[allow(clippy::type_complexity)]
    fn merge_columns<'py>(
        &self,
        py: Python<'py>,
    ) -> (Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>) {
        let ids = |pick: fn(&PyBpeMerge) -> u32| -> Bound<'py, PyBytes> {
            let raw: Vec<u8> = self.merges.iter().flat_map(|m| pick(m).to_le_bytes()).collect();
            PyBytes::new(py, &raw)
        };
        let counts: Vec<u8> = self.merges.iter().flat_map(|m| m.3.to_le_bytes()).collect();
        (ids(|m| m.0), ids(|m| m.1), ids(|m| m.2), PyBytes::new(py, &counts))
    }

    #[getter]
    fn snapshots(&self) -> Vec<(usize, usize, Vec<u64>)> {
        self.snapshots.clone()
    }
}

/// What `extend_bpe` learned: the new tokens (ids from `first_new` on), every token's uses in
/// the new corpus' segmentation (by id, base included), and the new merges in rank order.
#[pyclass(frozen, module = "tokreg._core")]
struct BpeExtended {
    #[pyo3(get)]
    first_new: usize,
    tokens: Vec<Vec<u8>>,
    token_counts: Vec<u64>,
    merges: Vec<PyBpeMerge>,
    #[pyo3(get)]
    distinct_pieces: usize,
    #[pyo3(get)]
    merge_seconds: f64,
}

#[pymethods]
impl BpeExtended {
    #[getter]
    fn tokens<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        self.tokens.iter().map(|t| PyBytes::new(py, t)).collect()
    }

    #[getter]
    fn token_counts(&self) -> Vec<u64> {
        self.token_counts.clone()
    }

    #[getter]
    fn merges(&self) -> Vec<PyBpeMerge> {
        self.merges.clone()
    }
}

/// A WordPiece merge as Python sees it: (left, right, result, score, pair count, left count,
/// right count).
type PyWordPieceMerge = (u32, u32, u32, f64, u64, u64, u64);

fn wordpiece_merges(trained: &wordpiece::TrainResult) -> Vec<PyWordPieceMerge> {
    trained
        .merges
        .iter()
        .map(|m| (m.left, m.right, m.result, m.score, m.pair_count, m.left_count, m.right_count))
        .collect()
}

/// What `train_wordpiece` learned: (text, count) per token in id order, merges in rank order.
#[pyclass(frozen, module = "tokreg._core")]
struct WordPieceTrained {
    tokens: Vec<(String, u64)>,
    merges: Vec<PyWordPieceMerge>,
    #[pyo3(get)]
    distinct_words: usize,
    #[pyo3(get)]
    merge_seconds: f64,
}

#[pymethods]
impl WordPieceTrained {
    #[getter]
    fn tokens(&self) -> Vec<(String, u64)> {
        self.tokens.clone()
    }

    #[getter]
    fn merges(&self) -> Vec<PyWordPieceMerge> {
        self.merges.clone()
    }
}

/// What `extend_wordpiece` learned: every token (base and new) as (text, count) in id order,
/// the new merges, the first new id and how many of the new tokens are new single symbols.
#[pyclass(frozen, module = "tokreg._core")]
struct WordPieceExtended {
    tokens: Vec<(String, u64)>,
    merges: Vec<PyWordPieceMerge>,
    #[pyo3(get)]
    first_new: usize,
    #[pyo3(get)]
    new_symbols: usize,
}

#[pymethods]
impl WordPieceExtended {
    #[getter]
    fn tokens(&self) -> Vec<(String, u64)> {
        self.tokens.clone()
    }

    #[getter]
    fn merges(&self) -> Vec<PyWordPieceMerge> {
        self.merges.clone()
    }
}

/// What `train_unigram` learned: the pieces of the largest size, each EM round as (round,
/// vocab size, log likelihood), and (vocab size, pieces, rounds taken) per smaller size asked.
#[pyclass(frozen, module = "tokreg._core")]
struct UnigramTrained {
    pieces: PyPieces,
    rounds: Vec<(u32, usize, f64)>,
    sized: Vec<(usize, PyPieces, usize)>,
    #[pyo3(get)]
    distinct_words: usize,
    #[pyo3(get)]
    train_seconds: f64,
}

#[pymethods]
impl UnigramTrained {
    #[getter]
    fn pieces(&self) -> PyPieces {
        self.pieces.clone()
    }

    #[getter]
    fn rounds(&self) -> Vec<(u32, usize, f64)> {
        self.rounds.clone()
    }

    #[getter]
    fn sized(&self) -> Vec<(usize, PyPieces, usize)> {
        self.sized.clone()
    }
}

/// Learns BPE merges from counted pieces; `snapshots` lists smaller token counts to take on
/// the way (several sizes from one run).
#[pyfunction]
#[pyo3(signature = (counts, max_tokens, min_frequency=0, char_level=false, end_of_word=None, max_token_bytes=0,
    snapshots=vec![], threads=0, progress=None))]
#[allow(clippy::too_many_arguments)]
fn train_bpe<'py>(
    py: Python<'py>,
    counts: PyRef<'py, Counts>,
    max_tokens: usize,
    min_frequency: u64,
    char_level: bool,
    end_of_word: Option<String>,
    max_token_bytes: usize,
    snapshots: Vec<usize>,
    threads: usize,
    progress: Option<PyObject>,
) -> PyResult<BpeTrained> {
    let cfg = bpe::CorpusConfig { max_tokens, min_frequency, char_level, end_of_word, max_token_bytes, snapshots };
    let mut prog = Progress::new(progress);
    let counts = &counts.inner;
    let out = py
        .allow_threads(|| {
            pool::install(threads, || bpe::train_counts(counts, &cfg, &mut |p, d, t| prog.report(p, d, t)))?
        })
        .map_err(|e| prog.fail(py, e))?;
    py.allow_threads(crate::memory::give_back_memory);
    Ok(BpeTrained::of(out.trained, out.alphabet_size, out.distinct_pieces, out.merge_seconds))
}

/// What a parity-aware BPE run records beside its merges: per merge the language it went to
/// (None: a global merge) and each language's gain (merges × languages, row by row); each
/// language's training and development bytes; per snapshot asked, then the final state, each
/// language's (training tokens, development tokens).
type ParityRecord = (Vec<Option<u32>>, Vec<u64>, Vec<u64>, Vec<u64>, Vec<(Vec<u64>, Vec<u64>)>);

/// Parity-aware BPE (`bpe::train_parity`): one counted training text per language and, with a
/// parallel set, one counted development text per language in the same order.
#[pyfunction]
#[pyo3(signature = (train, dev, max_tokens, min_frequency=0, max_token_bytes=0, snapshots=vec![],
    global_merges=0, window=0, alpha=2, progress=None))]
#[allow(clippy::too_many_arguments)]
fn train_parity<'py>(
    py: Python<'py>,
    train: Vec<PyRef<'py, Counts>>,
    dev: Vec<PyRef<'py, Counts>>,
    max_tokens: usize,
    min_frequency: u64,
    max_token_bytes: usize,
    snapshots: Vec<usize>,
    global_merges: usize,
    window: usize,
    alpha: usize,
    progress: Option<PyObject>,
) -> PyResult<(BpeTrained, ParityRecord)> {
    let cfg = bpe::ParityConfig { max_tokens, min_frequency, max_token_bytes, snapshots, global_merges, window, alpha };
    let mut prog = Progress::new(progress);
    let train: Vec<&count::Counts> = train.iter().map(|c| &c.inner).collect();
    let dev: Vec<&count::Counts> = dev.iter().map(|c| &c.inner).collect();
    let out = py
        .allow_threads(|| bpe::train_parity(&train, &dev, &cfg, &mut |p, d, t| prog.report(p, d, t)))
        .map_err(|e| prog.fail(py, e))?;
    py.allow_threads(crate::memory::give_back_memory);
    let trained = BpeTrained::of(out.trained, 256, out.distinct_pieces, out.merge_seconds);
    let costs = out.costs.into_iter().map(|c| (c.train_tokens, c.dev_tokens)).collect();
    Ok((trained, (out.chosen, out.gains, out.train_bytes, out.dev_bytes, costs)))
}

/// Superword BPE (SuperBPE) in two stages on counted runs (`bpe::train_superword`): the
/// trained result, the tokens when stage 2 began, the number of stage-1 merges, distinct runs.
#[pyfunction]
#[pyo3(signature = (counts, pattern, max_tokens, transition, min_frequency=0, max_token_bytes=0,
    snapshots=vec![], threads=0, progress=None))]
#[allow(clippy::too_many_arguments)]
fn train_superword<'py>(
    py: Python<'py>,
    counts: PyRef<'py, Counts>,
    pattern: &str,
    max_tokens: usize,
    transition: usize,
    min_frequency: u64,
    max_token_bytes: usize,
    snapshots: Vec<usize>,
    threads: usize,
    progress: Option<PyObject>,
) -> PyResult<(BpeTrained, usize, usize, usize)> {
    let cfg = bpe::SuperwordConfig { max_tokens, transition, min_frequency, max_token_bytes, snapshots };
    let mut prog = Progress::new(progress);
    let counts = &counts.inner;
    let out = py
        .allow_threads(|| {
            pool::install(threads, || bpe::train_superword(counts, pattern, &cfg, &mut |p, d, t| prog.report(p, d, t)))?
        })
        .map_err(|e| prog.fail(py, e))?;
    py.allow_threads(crate::memory::give_back_memory);
    let trained = BpeTrained::of(out.trained, 256, out.distinct_pieces, out.merge_seconds);
    Ok((trained, out.transition, out.stage1_merges, out.distinct_runs))
}

/// (tokens, in the vocabulary, counts, merges (left, right, result, count), removals (after
/// rank, token, IoS, count, residue ratio), seconds) of a PickyBPE run.
type PickyTrained = (Vec<Vec<u8>>, Vec<bool>, Vec<u64>, Vec<PyBpeMerge>, Vec<(usize, u32, Option<f64>, u64, f64)>, f64);

/// PickyBPE (Chizhov et al., arXiv 2409.04599) on counted byte-level pieces (`bpe::train_picky`).
#[pyfunction]
#[pyo3(signature = (counts, max_tokens, threshold, min_frequency=0, max_token_bytes=0, residue_below=0.0, residue_min_seen=0, residue_cost=1.0, progress=None))]
#[allow(clippy::too_many_arguments)]
fn train_picky<'py>(
    py: Python<'py>,
    counts: PyRef<'py, Counts>,
    max_tokens: usize,
    threshold: f64,
    min_frequency: u64,
    max_token_bytes: usize,
    residue_below: f64,
    residue_min_seen: u64,
    residue_cost: f64,
    progress: Option<PyObject>,
) -> PyResult<PickyTrained> {
    let cfg = bpe::PickyConfig {
        target_tokens: max_tokens,
        threshold,
        min_frequency,
        max_token_bytes,
        residue_below,
        residue_min_seen,
        residue_cost,
    };
    let mut prog = Progress::new(progress);
    let counts = &counts.inner;
    let out = py
        .allow_threads(|| {
            let (alphabet, words) = bpe::train::byte_words(counts);
            bpe::train_picky(alphabet, words, &cfg, &mut |d, t| prog.report("merge", d, t))
        })
        .map_err(|e| prog.fail(py, e))?;
    py.allow_threads(crate::memory::give_back_memory);
    Ok((
        out.tokens,
        out.present,
        out.token_counts,
        out.merges.iter().map(|m| (m.left, m.right, m.result, m.count)).collect(),
        out.removals.iter().map(|r| (r.after, r.token, r.ios, r.count, r.ratio)).collect(),
        out.merge_seconds,
    ))
}

/// Continued BPE training: up to `max_new` merges learned on counted pieces after `base`'s
/// own segmentation of them; the base's ids and merges are untouched (see `bpe::extend`).
#[pyfunction]
#[pyo3(signature = (base, counts, max_new, min_frequency=0, max_token_bytes=0, keep=vec![], threads=0, progress=None, retired=vec![], refused=vec![]))]
#[allow(clippy::too_many_arguments)]
fn extend_bpe<'py>(
    py: Python<'py>,
    base: PyRef<'py, Encoder>,
    counts: PyRef<'py, Counts>,
    max_new: usize,
    min_frequency: u64,
    max_token_bytes: usize,
    keep: Vec<Vec<u8>>,
    threads: usize,
    progress: Option<PyObject>,
    retired: Vec<u32>,
    refused: Vec<Vec<u8>>,
) -> PyResult<BpeExtended> {
    let cfg = bpe::ExtendConfig { max_new, min_frequency, max_token_bytes, keep, retired, refused };
    let mut prog = Progress::new(progress);
    let (tok, counts) = (&base.tok, &counts.inner);
    let out = py
        .allow_threads(|| {
            pool::install(threads, || bpe::extend(tok, counts, &cfg, &mut |p, d, t| prog.report(p, d, t)))?
        })
        .map_err(|e| prog.fail(py, e))?;
    Ok(BpeExtended {
        first_new: out.first_new,
        merges: out.merges.iter().map(|m| (m.left, m.right, m.result, m.count)).collect(),
        tokens: out.new_tokens,
        token_counts: out.token_counts,
        distinct_pieces: out.distinct_pieces,
        merge_seconds: out.merge_seconds,
    })
}

/// Continued WordPiece training: up to `max_new` tokens learned on counted (normalized) words
/// after `base`'s own segmentation of them (greedy longest match); see `wordpiece::extend`.
/// `base`: the base's tokens by id, "" at ids that are not ordinary tokens; `objective` ranks
/// the new merges (`frequency`, `likelihood` or `ratio`, as in training).
#[pyfunction]
#[pyo3(signature = (base, counts, max_new, continuing_prefix="##", max_chars=100, min_frequency=0, keep=vec![],
    threads=0, progress=None, objective="ratio"))]
#[allow(clippy::too_many_arguments)]
fn extend_wordpiece<'py>(
    py: Python<'py>,
    base: Vec<String>,
    counts: PyRef<'py, Counts>,
    max_new: usize,
    continuing_prefix: &str,
    max_chars: usize,
    min_frequency: u64,
    keep: Vec<String>,
    threads: usize,
    progress: Option<PyObject>,
    objective: &str,
) -> PyResult<WordPieceExtended> {
    let cfg = wordpiece::ExtendConfig {
        objective: wordpiece::Objective::from_name(objective).map_err(|e| to_py_err(py, e))?,
        max_new,
        continuing_prefix: continuing_prefix.to_string(),
        max_chars,
        min_frequency,
        keep,
    };
    let mut prog = Progress::new(progress);
    let counts = &counts.inner;
    let out = py
        .allow_threads(|| {
            pool::install(threads, || wordpiece::extend(base, counts, &cfg, &mut |p, d, t| prog.report(p, d, t)))?
        })
        .map_err(|e| prog.fail(py, e))?;
    Ok(WordPieceExtended {
        merges: wordpiece_merges(&out.trained),
        tokens: out.trained.tokens,
        first_new: out.first_new,
        new_symbols: out.new_symbols,
    })
}

/// HF's BertNormalizer settings, plus an optional Unicode normalization run first.
fn bert_normalizer(
    clean_text: bool,
    handle_chinese_chars: bool,
    strip_accents: Option<bool>,
    lowercase: bool,
    unicode_form: Option<&str>,
) -> Result<normalize::BertNormalizer, CoreError> {
    let mut n = normalize::BertNormalizer::hf(clean_text, handle_chinese_chars, strip_accents, lowercase);
    n.unicode_form = normalize::Form::from_name(unicode_form)?;
    Ok(n)
}

/// Learns WordPiece merges from counted words (see `Counter.bert`).
#[pyfunction]
#[pyo3(signature = (counts, vocab_size, special_tokens, continuing_prefix="##", min_frequency=0,
    limit_alphabet=None, max_token_len=None, threads=0, progress=None, objective="ratio"))]
#[allow(clippy::too_many_arguments)]
fn train_wordpiece<'py>(
    py: Python<'py>,
    counts: PyRef<'py, Counts>,
    vocab_size: usize,
    special_tokens: Vec<String>,
    continuing_prefix: &str,
    min_frequency: u64,
    limit_alphabet: Option<usize>,
    max_token_len: Option<usize>,
    threads: usize,
    progress: Option<PyObject>,
    objective: &str,
) -> PyResult<WordPieceTrained> {
    let cfg = wordpiece::TrainerConfig {
        objective: wordpiece::Objective::from_name(objective).map_err(|e| to_py_err(py, e))?,
        vocab_size,
        min_frequency,
        continuing_prefix: continuing_prefix.to_string(),
        special_tokens,
        limit_alphabet,
        max_token_len,
    };
    let mut prog = Progress::new(progress);
    let counts = &counts.inner;
    let out = py
        .allow_threads(|| {
            pool::install(threads, || wordpiece::train_counts(counts, &cfg, &mut |p, d, t| prog.report(p, d, t)))?
        })
        .map_err(|e| prog.fail(py, e))?;
    Ok(WordPieceTrained {
        merges: wordpiece_merges(&out.trained),
        tokens: out.trained.tokens,
        distinct_words: out.distinct_words,
        merge_seconds: out.merge_seconds,
    })
}

/// Unigram pieces as Python sees them: (text, score, kind).
type PyPieces = Vec<(String, f64, &'static str)>;

fn pieces_of(pieces: Vec<unigram::Piece>) -> PyPieces {
    pieces.into_iter().map(|p| (p.text, p.score, p.kind.name())).collect()
}

/// Trains a Unigram LM from counted `▁`-words (see `Counter.sentencepiece`); `snapshots` lists
/// smaller vocabulary sizes taken from the pruning rounds on the way.
#[pyfunction]
#[pyo3(signature = (counts, vocab_size, byte_fallback=false, shrinking_factor=0.75, max_piece_length=16,
    seed_size=1_000_000, em_iterations=2, unk_piece="<unk>".to_string(), control_pieces=vec![],
    user_defined=vec![], character_coverage=1.0, snapshots=vec![], threads=0, progress=None,
    split=(true, true, true, false), base=None, keep=None, revision=unigram::REVISION))]
#[allow(clippy::too_many_arguments)]
fn train_unigram<'py>(
    py: Python<'py>,
    counts: PyRef<'py, Counts>,
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
    snapshots: Vec<usize>,
    threads: usize,
    progress: Option<PyObject>,
    split: (bool, bool, bool, bool),
    base: Option<Vec<(String, f64)>>,
    keep: Option<Vec<String>>,
    revision: u32,
) -> PyResult<UnigramTrained> {
    let (by_unicode_script, by_number, by_whitespace, digits) = split;
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
        revision,
        snapshots,
        split: unigram::SplitRules { by_unicode_script, by_number, by_whitespace, digits },
        base: base.unwrap_or_default(),
        keep: keep.unwrap_or_default(),
    };
    let mut prog = Progress::new(progress);
    let counts = &counts.inner;
    let out = py
        .allow_threads(|| {
            pool::install(threads, || unigram::train_counts(counts, &cfg, &mut |p, d, t| prog.report(p, d, t)))?
        })
        .map_err(|e| prog.fail(py, e))?;
    Ok(UnigramTrained {
        rounds: out.trained.rounds.iter().map(|r| (r.round, r.vocab_size, r.log_likelihood)).collect(),
        sized: out.trained.sized.into_iter().map(|s| (s.vocab_size, pieces_of(s.pieces), s.rounds)).collect(),
        pieces: pieces_of(out.trained.pieces),
        distinct_words: out.distinct_words,
        train_seconds: out.train_seconds,
    })
}

/// An encoder of any algorithm, with its special tokens: what `tokreg.load` compiles a version
/// into. Built from the version's canonical content bytes by one constructor per algorithm.
#[pyclass(frozen, module = "tokreg._core")]
struct Encoder {
    tok: Tokenizer,
    ints: IdInts,
}

impl Encoder {
    /// Builds with the GIL released (a large vocabulary takes tens of milliseconds).
    fn build(py: Python<'_>, make: impl FnOnce() -> Result<Tokenizer, CoreError> + Send) -> PyResult<Encoder> {
        let tok = py.allow_threads(make).or_raise(py)?;
        let ints = IdInts::new(tok.id_bound());
        Ok(Encoder { tok, ints })
    }

    /// A call's special-token rule from its two arguments (None: "all", see `encode`).
    fn rule(&self, allowed: &Option<Vec<String>>, disallowed: &Option<Vec<String>>) -> Result<Rule, CoreError> {
        self.tok.rule(allowed.as_deref(), disallowed.as_deref())
    }
}

#[pymethods]
impl Encoder {
    /// Byte-level BPE over a rank map (tiktoken's rule), pre-tokenized by `pattern`; with
    /// `keep_gaps` the text between the pattern's matches is pieces too.
    #[staticmethod]
    #[pyo3(signature = (content, pattern, keep_gaps=false))]
    fn byte_bpe(py: Python<'_>, content: &[u8], pattern: &str, keep_gaps: bool) -> PyResult<Encoder> {
        Encoder::build(py, || Tokenizer::byte_bpe(content, pattern, keep_gaps))
    }

    /// Superword BPE (SuperBPE): stage 1's tokens per piece, stage 2's merges over runs.
    #[staticmethod]
    #[pyo3(signature = (content, pattern, transition, stage1_merges, max_words))]
    fn superword_bpe(
        py: Python<'_>,
        content: &[u8],
        pattern: &str,
        transition: u32,
        stage1_merges: usize,
        max_words: usize,
    ) -> PyResult<Encoder> {
        Encoder::build(py, || Tokenizer::superword_bpe(content, pattern, transition, stage1_merges, max_words))
    }

    /// Byte-level BPE without the tokens `removed` (`bpe::residue_free`).
    #[staticmethod]
    #[pyo3(signature = (content, pattern, removed, keep_gaps=false))]
    fn residue_free_bpe(
        py: Python<'_>,
        content: &[u8],
        pattern: &str,
        removed: Vec<u32>,
        keep_gaps: bool,
    ) -> PyResult<Encoder> {
        Encoder::build(py, || Tokenizer::residue_free_bpe(content, pattern, keep_gaps, &removed))
    }

    /// PickyBPE: merges and removals replayed in order (`bpe::picky`).
    #[staticmethod]
    #[pyo3(signature = (content, pattern, removals))]
    fn picky_bpe(py: Python<'_>, content: &[u8], pattern: &str, removals: Vec<(u32, u32)>) -> PyResult<Encoder> {
        Encoder::build(py, || Tokenizer::picky_bpe(content, pattern, &removals))
    }

    /// Classic character-level BPE over a merge table.
    #[staticmethod]
    #[pyo3(signature = (content, pattern, end_of_word=None, unk_token=None, keep_gaps=false))]
    fn char_bpe(
        py: Python<'_>,
        content: &[u8],
        pattern: &str,
        end_of_word: Option<&str>,
        unk_token: Option<&str>,
        keep_gaps: bool,
    ) -> PyResult<Encoder> {
        Encoder::build(py, || Tokenizer::char_bpe(content, pattern, keep_gaps, end_of_word, unk_token))
    }

    /// WordPiece: BERT normalizer, BERT pre-tokenizer, greedy longest match; decoded with the
    /// decoder's prefix (default: the continuing prefix; "": tokens joined by spaces) and clean-up.
    #[staticmethod]
    #[pyo3(signature = (content, unk_token, continuing_prefix="##", max_input_chars_per_word=100,
        clean_text=true, handle_chinese_chars=true, strip_accents=None, lowercase=false, unicode_form=None,
        decode_prefix=None, decode_cleanup=true))]
    #[allow(clippy::too_many_arguments)]
    fn wordpiece(
        py: Python<'_>,
        content: &[u8],
        unk_token: &str,
        continuing_prefix: &str,
        max_input_chars_per_word: usize,
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: Option<bool>,
        lowercase: bool,
        unicode_form: Option<&str>,
        decode_prefix: Option<&str>,
        decode_cleanup: bool,
    ) -> PyResult<Encoder> {
        let norm =
            bert_normalizer(clean_text, handle_chinese_chars, strip_accents, lowercase, unicode_form).or_raise(py)?;
        Encoder::build(py, || {
            let decoder = (decode_prefix.unwrap_or(continuing_prefix), decode_cleanup);
            Tokenizer::wordpiece(content, unk_token, continuing_prefix, max_input_chars_per_word, norm, decoder)
        })
    }

    /// Unigram LM: SentencePiece text handling, Viterbi, n-best and sampling.
    #[staticmethod]
    #[pyo3(signature = (content, add_dummy_prefix=true, remove_extra_whitespaces=false, escape_whitespaces=true,
        charsmap=None, denormalizer=None, unk_surface=None))]
    #[allow(clippy::too_many_arguments)]
    fn unigram(
        py: Python<'_>,
        content: &[u8],
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        charsmap: Option<&[u8]>,
        denormalizer: Option<(Vec<u8>, bool, bool, bool)>,
        unk_surface: Option<&str>,
    ) -> PyResult<Encoder> {
        let norm =
            sp_normalizer(add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces, charsmap, denormalizer)
                .or_raise(py)?;
        let unk_surface = unk_surface.unwrap_or(unigram::DEFAULT_UNK_SURFACE);
        Encoder::build(py, || Tokenizer::unigram(content, norm, unk_surface))
    }

    /// SentencePiece BPE (imported `model_type: BPE` models): SentencePiece text handling,
    /// then score-driven merges.
    #[staticmethod]
    #[pyo3(signature = (content, add_dummy_prefix=true, remove_extra_whitespaces=false, escape_whitespaces=true,
        charsmap=None, denormalizer=None, unk_surface=None))]
    #[allow(clippy::too_many_arguments)]
    fn sp_bpe(
        py: Python<'_>,
        content: &[u8],
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        charsmap: Option<&[u8]>,
        denormalizer: Option<(Vec<u8>, bool, bool, bool)>,
        unk_surface: Option<&str>,
    ) -> PyResult<Encoder> {
        let norm =
            sp_normalizer(add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces, charsmap, denormalizer)
                .or_raise(py)?;
        let unk_surface = unk_surface.unwrap_or(unigram::DEFAULT_UNK_SURFACE);
        Encoder::build(py, || Tokenizer::sp_bpe(content, norm, unk_surface))
    }

    /// Unigram as Hugging Face runs it, behind a `tokenizer.json`'s own steps: each a (type,
    /// string arguments); `blobs` holds the `Precompiled` rules the steps point to by index.
    /// `unk_special`: the unknown piece is an added (special) token, matched before the rest.
    #[staticmethod]
    #[pyo3(signature = (content, normalizer, pre_tokenizer, decoder, blobs, byte_fallback=false, unk_special=true))]
    #[allow(clippy::too_many_arguments)]
    fn hf_unigram(
        py: Python<'_>,
        content: &[u8],
        normalizer: Vec<(String, Vec<String>)>,
        pre_tokenizer: Vec<(String, Vec<String>)>,
        decoder: Option<Vec<(String, Vec<String>)>>,
        blobs: Vec<Vec<u8>>,
        byte_fallback: bool,
        unk_special: bool,
    ) -> PyResult<Encoder> {
        let steps = crate::hfpipe::Steps { normalizer, pre_tokenizer, decoder, blobs };
        Encoder::build(py, || Tokenizer::hf_unigram(content, &steps, byte_fallback, unk_special))
    }

    /// BPE as Hugging Face runs it, behind a `tokenizer.json`'s own steps (as `hf_unigram`);
    /// the rest are the file's BPE model settings.
    #[staticmethod]
    #[pyo3(signature = (content, normalizer, pre_tokenizer, decoder, blobs, byte_level, unk_token=None,
        continuing_subword_prefix=None, end_of_word_suffix=None, fuse_unk=false, byte_fallback=false,
        ignore_merges=false))]
    #[allow(clippy::too_many_arguments)]
    fn hf_bpe(
        py: Python<'_>,
        content: &[u8],
        normalizer: Vec<(String, Vec<String>)>,
        pre_tokenizer: Vec<(String, Vec<String>)>,
        decoder: Option<Vec<(String, Vec<String>)>>,
        blobs: Vec<Vec<u8>>,
        byte_level: bool,
        unk_token: Option<&str>,
        continuing_subword_prefix: Option<String>,
        end_of_word_suffix: Option<String>,
        fuse_unk: bool,
        byte_fallback: bool,
        ignore_merges: bool,
    ) -> PyResult<Encoder> {
        let steps = crate::hfpipe::Steps { normalizer, pre_tokenizer, decoder, blobs };
        let opts = crate::hfpipe::BpeOptions {
            byte_level,
            unk: None,
            continuing_prefix: continuing_subword_prefix,
            end_of_word_suffix,
            fuse_unk,
            byte_fallback,
            ignore_merges,
        };
        Encoder::build(py, || Tokenizer::hf_bpe(content, &steps, unk_token, opts))
    }

    /// WordPiece as Hugging Face runs it, behind a `tokenizer.json`'s own steps (as `hf_unigram`).
    #[staticmethod]
    #[pyo3(signature = (content, normalizer, pre_tokenizer, decoder, blobs, unk_token, continuing_subword_prefix,
        max_input_chars_per_word))]
    #[allow(clippy::too_many_arguments)]
    fn hf_wordpiece(
        py: Python<'_>,
        content: &[u8],
        normalizer: Vec<(String, Vec<String>)>,
        pre_tokenizer: Vec<(String, Vec<String>)>,
        decoder: Option<Vec<(String, Vec<String>)>>,
        blobs: Vec<Vec<u8>>,
        unk_token: &str,
        continuing_subword_prefix: &str,
        max_input_chars_per_word: usize,
    ) -> PyResult<Encoder> {
        let steps = crate::hfpipe::Steps { normalizer, pre_tokenizer, decoder, blobs };
        Encoder::build(py, || {
            Tokenizer::hf_wordpiece(content, &steps, unk_token, continuing_subword_prefix, max_input_chars_per_word)
        })
    }

    /// This encoder's built tables as bytes for `thaw`, with `tag` (what they were built from,
    /// checked by `thaw`) and `meta` (handed back by `thaw`); None for an algorithm that builds
    /// from its content fast enough (`encode/frozen.rs`).
    fn freeze<'py>(&self, py: Python<'py>, tag: &[u8], meta: &[u8]) -> Option<Bound<'py, PyBytes>> {
        let data = py.allow_threads(|| self.tok.freeze(tag, meta))?;
        Some(PyBytes::new(py, &data))
    }

    /// The encoder `freeze` wrote to `data` and its meta, if `data` is intact and carries
    /// exactly `tag`; None otherwise (the caller then builds from content). `data`: any
    /// read-only contiguous byte buffer, such as a memory map of the file, which the encoder
    /// then reads its tables from in place and keeps (exported, so it stays open and in place)
    /// for as long as it lives (`encode/table.rs`; a fresh copy of tens of megabytes costs more
    /// in page faults than building takes).
    #[staticmethod]
    fn thaw<'py>(
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        tag: &[u8],
    ) -> PyResult<Option<(Encoder, Bound<'py, PyBytes>)>> {
        let buf = pyo3::buffer::PyBuffer::<u8>::get(data)?;
        if !buf.is_c_contiguous() || !buf.readonly() {
            return Ok(None);
        }
        let backing: std::sync::Arc<dyn Backing> = std::sync::Arc::new(Exported(buf));
        let kept = std::sync::Arc::clone(&backing);
        let Some((tok, meta)) = py.allow_threads(|| Tokenizer::thaw(kept, tag)) else {
            return Ok(None); // `backing` is the last reference: the buffer is released here, with the GIL
        };
        let ints = IdInts::new(tok.id_bound());
        Ok(Some((Encoder { tok, ints }, PyBytes::new(py, &meta))))
    }

    /// Whether this encoder reads its tables in place from the buffer it was thawed from.
    #[getter]
    fn tables_in_place(&self) -> bool {
        self.tok.encoder().tables_in_place()
    }

    /// "byte_bpe", "char_bpe", "wordpiece", "unigram" or "sp_bpe".
    #[getter]
    fn kind(&self) -> &'static str {
        self.tok.kind().name()
    }

    /// The number of tokens, special tokens included.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.tok.vocab_size()
    }

    /// The highest id + 1 (tiktoken vocabularies have gaps before their specials).
    #[getter]
    fn id_bound(&self) -> usize {
        self.tok.id_bound()
    }

    /// The special tokens as (text, id), by id.
    fn specials(&self) -> Vec<(String, u32)> {
        self.tok.specials()
    }

    /// The text as the encoder sees it before segmentation (identity for BPE).
    fn normalize(&self, text: &str) -> String {
        self.tok.normalize(text)
    }

    /// Special tokens are plain text here.
    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let ids = py.allow_threads(|| self.tok.encode_ordinary(text)).or_raise(py)?;
        self.ints.list(py, &ids)
    }

    /// The ids of `text` under tiktoken's special-token rule (`encode::Rule`): the
    /// `allowed_special` tokens become their ids (None: all), and a text holding one of
    /// `disallowed_special` raises SpecialTokenError (None: every special token not allowed);
    /// the rest is ordinary text.
    #[pyo3(signature = (text, allowed_special=Some(vec![]), disallowed_special=Some(vec![])))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed_special: Option<Vec<String>>,
        disallowed_special: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .allow_threads(|| self.tok.encode(text, &self.rule(&allowed_special, &disallowed_special)?))
            .or_raise(py)?;
        self.ints.list(py, &ids)
    }

    /// The first of `names` (special tokens) that occurs in `text`, by position.
    fn find_special(&self, py: Python<'_>, text: &str, names: Vec<String>) -> PyResult<Option<String>> {
        self.tok.find_special(text, &names).or_raise(py)
    }

    /// `encode` of every text, on `threads` threads (0: one per core) with the GIL released;
    /// the texts are borrowed, not copied. A refused string names the first text holding one.
    #[pyo3(signature = (texts, allowed_special=Some(vec![]), threads=0, *, disallowed_special=Some(vec![])))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed_special: Option<Vec<String>>,
        threads: usize,
        disallowed_special: Option<Vec<String>>,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        let views = StrViews::new(&texts)?;
        let parts = py
            .allow_threads(|| {
                let rule = self.rule(&allowed_special, &disallowed_special)?;
                Ok::<_, CoreError>(views.utf8(threads)?.map(|utf8| self.tok.encode_batch(&utf8, &rule, threads)))
            })
            .or_raise(py)?
            .map_err(|k| surrogate_error(&texts, k))?
            .or_raise(py)?;
        self.ints.lists_in_pool(py, &parts, threads)
    }

    /// The number of ids `encode` gives; no list is made.
    #[pyo3(signature = (text, allowed_special=Some(vec![]), disallowed_special=Some(vec![])))]
    fn count(
        &self,
        py: Python<'_>,
        text: &str,
        allowed_special: Option<Vec<String>>,
        disallowed_special: Option<Vec<String>>,
    ) -> PyResult<usize> {
        py.allow_threads(|| self.tok.count(text, &self.rule(&allowed_special, &disallowed_special)?)).or_raise(py)
    }

    /// The number of ids of each text (`encode_batch` without the lists).
    #[pyo3(signature = (texts, allowed_special=Some(vec![]), threads=0, *, disallowed_special=Some(vec![])))]
    fn count_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed_special: Option<Vec<String>>,
        threads: usize,
        disallowed_special: Option<Vec<String>>,
    ) -> PyResult<Vec<usize>> {
        let views = StrViews::new(&texts)?;
        py.allow_threads(|| {
            let rule = self.rule(&allowed_special, &disallowed_special)?;
            Ok::<_, CoreError>(views.utf8(threads)?.map(|utf8| self.tok.count_batch(&utf8, &rule, threads)))
        })
        .or_raise(py)?
        .map_err(|k| surrogate_error(&texts, k))?
        .or_raise(py)
    }

    /// What a version loses of a text: (lines, lost lines, tokens, ids among `specials`, bytes,
    /// lines that are not UTF-8), over the lines of every segment (see `encode::RoundTrip`),
    /// on `threads` threads with the GIL released.
    #[pyo3(signature = (segments, specials, threads=0))]
    fn round_trip(
        &self,
        py: Python<'_>,
        segments: Vec<PyBackedBytes>,
        specials: Vec<u32>,
        threads: usize,
    ) -> PyResult<RoundTripTotals> {
        let r = py.allow_threads(|| self.tok.round_trip(&segments, &specials, threads)).or_raise(py)?;
        Ok((r.lines, r.lost_lines, r.tokens, r.unknown, r.bytes, r.skipped))
    }

    /// `round_trip` of the whole text `counts` were counted from, found from its distinct
    /// pieces (`encode::round_trip`), the same six numbers; `None` when the pieces cannot stand
    /// for the lines (measure the lines then). `uncached=False`: each key segmented through the
    /// encoder's cached path, as the tests compare.
    #[pyo3(signature = (counts, specials, threads=0, uncached=true))]
    fn round_trip_pieces(
        &self,
        py: Python<'_>,
        counts: PyRef<'_, Counts>,
        specials: Vec<u32>,
        threads: usize,
        uncached: bool,
    ) -> PyResult<Option<RoundTripTotals>> {
        let counts = &counts.inner;
        let r = py.allow_threads(|| self.tok.round_trip_keys(counts, &specials, threads, uncached)).or_raise(py)?;
        Ok(r.map(|r| (r.lines, r.lost_lines, r.tokens, r.unknown, r.bytes, r.skipped)))
    }

    /// `encode_batch` as two flat buffers and no Python object per id: the ids of every text
    /// one after another (native-endian u32), and n+1 offsets into them (native-endian u64):
    /// text k is ids[offsets[k]:offsets[k+1]].
    #[pyo3(signature = (texts, allowed_special=Some(vec![]), threads=0, *, disallowed_special=Some(vec![])))]
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed_special: Option<Vec<String>>,
        threads: usize,
        disallowed_special: Option<Vec<String>>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let views = StrViews::new(&texts)?;
        let (ids, offsets) = py
            .allow_threads(|| {
                let rule = self.rule(&allowed_special, &disallowed_special)?;
                Ok::<_, CoreError>(views.utf8(threads)?.map(|utf8| {
                    Ok::<_, CoreError>(flat_bytes(&self.tok.encode_batch(&utf8, &rule, threads)?, utf8.len()))
                }))
            })
            .or_raise(py)?
            .map_err(|k| surrogate_error(&texts, k))?
            .or_raise(py)?;
        Ok((PyBytes::new(py, &ids), PyBytes::new(py, &offsets)))
    }

    /// The documents of `buf` (whole lines, see `documents::cut`) cut and encoded in one call
    /// with the GIL released, packed as a dataset stores them (`documents::pack`) into `out`:
    /// (bytes of ids written at the start of `out`, ids per document as i64, where each document
    /// ends in `buf` as i64, the units that are not documents as (end, line index, why, size),
    /// bytes of document text, lines in `buf`). `why` is "over", "line_over", "not_utf8" (size:
    /// the bad byte's offset), "empty" or "python". `draw`: a stochastic encoding's (method, p,
    /// seed).
    ///
    /// `buf`: any read-only contiguous byte buffer (bytes, or a read-only memory map of the
    /// input: the reader hands the file's pages over without copying them). `out`: a bytearray
    /// the caller reuses from frame to frame, grown when the ids need more room, never shrunk,
    /// and never zeroed (every byte of the ids is written once); the caller must not touch it
    /// during the call (the GIL is released while the ids are written into it).
    #[pyo3(signature = (buf, kind, field, limit, skip, overrides, allowed_special, disallowed_special, threads,
        prefix, suffix, itemsize, out, draw=None))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn encode_documents<'py>(
        &self,
        py: Python<'py>,
        buf: &Bound<'py, PyAny>,
        kind: &str,
        field: &str,
        limit: usize,
        skip: i64,
        overrides: Vec<(usize, String)>,
        allowed_special: Option<Vec<String>>,
        disallowed_special: Option<Vec<String>>,
        threads: usize,
        prefix: Vec<u32>,
        suffix: Vec<u32>,
        itemsize: usize,
        out: &Bound<'py, PyByteArray>,
        draw: Option<(String, f64, u64)>,
    ) -> PyResult<(
        usize,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Vec<(usize, usize, &'static str, usize)>,
        usize,
        usize,
    )> {
        let kind = documents::Kind::from_name(kind)
            .ok_or_else(|| CoreError::input(format!("no such kind of document: {kind}")))
            .or_raise(py)?;
        let draw = match draw {
            Some((method, p, seed)) => {
                Some(Method::from_name(&method).and_then(|m| Draw::new(m, p, seed)).or_raise(py)?)
            }
            None => None,
        };
        let input = read_only(py, buf)?;
        let pieces = py
            .allow_threads(|| {
                let frame = documents::Frame { buf: input.bytes(), kind, field, limit, skip, overrides: &overrides };
                let rule = self.rule(&allowed_special, &disallowed_special)?;
                documents::encode_frame(&self.tok, &frame, &rule, draw, threads)
            })
            .or_raise(py)?;
        drop(input); // released with the GIL held
                     // The ids packed by the pieces' tasks straight into `out` (the GIL released meanwhile:
                     // the caller keeps `out` to itself), over whatever it held: each byte is written once.
        let (size, lengths_size) = documents::packed_pieces_size(&pieces, prefix.len() + suffix.len(), itemsize);
        if out.len() < size {
            out.resize(size + size / 8)?; // a little room, so that the next frame's ids fit
        }
        // SAFETY: `out` holds at least `size` bytes and is not resized until this call returns;
        // no Python code runs on it meanwhile (the caller's contract, above).
        let ids: &mut [u8] = unsafe { &mut out.as_bytes_mut()[..size] };
        let mut lengths = vec![0u8; lengths_size];
        py.allow_threads(|| {
            let packing = (&prefix[..], &suffix[..], itemsize);
            documents::pack_pieces(&pieces, packing, threads, ids, &mut lengths)
        })
        .or_raise(py)?;
        let ends: Vec<u8> = pieces.iter().flat_map(|p| &p.ends).flat_map(|&e| (e as i64).to_le_bytes()).collect();
        let bad = pieces
            .iter()
            .flat_map(|p| &p.bad)
            .map(|b| match b.why {
                documents::Why::Over(n) => (b.end, b.line, "over", n),
                documents::Why::LineOver => (b.end, b.line, "line_over", 0),
                documents::Why::NotUtf8(at) => (b.end, b.line, "not_utf8", at),
                documents::Why::Empty => (b.end, b.line, "empty", 0),
                documents::Why::Python => (b.end, b.line, "python", 0),
            })
            .collect();
        let text_bytes = pieces.iter().map(|p| p.text_bytes).sum();
        let lines = pieces.iter().map(|p| p.lines).sum();
        Ok((size, PyBytes::new(py, &lengths), PyBytes::new(py, &ends), bad, text_bytes, lines))
    }

    /// `encode_batch` drawn by a stochastic method (`encode::stochastic`): `method` is
    /// bpe-dropout, stochastok or unigram, `p` its strength; each text's draw depends on the
    /// seed and the text only. With `flat`, the two buffers of `encode_batch_flat`.
    #[pyo3(signature = (texts, allowed_special, threads, disallowed_special, method, p, seed, flat=false))]
    #[allow(clippy::too_many_arguments)]
    fn encode_batch_drawn<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        allowed_special: Option<Vec<String>>,
        threads: usize,
        disallowed_special: Option<Vec<String>>,
        method: &str,
        p: f64,
        seed: u64,
        flat: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let draw = Method::from_name(method).and_then(|m| Draw::new(m, p, seed)).or_raise(py)?;
        let parts = py
            .allow_threads(|| {
                self.tok.encode_batch_drawn(&texts, &self.rule(&allowed_special, &disallowed_special)?, draw, threads)
            })
            .or_raise(py)?;
        if flat {
            let (ids, offsets) = flat_bytes(&parts, texts.len());
            return Ok((PyBytes::new(py, &ids), PyBytes::new(py, &offsets)).into_pyobject(py)?.into_any());
        }
        Ok(PyList::new(py, self.ints.lists(py, &parts)?)?.into_any())
    }

    /// Per token id, how often BPE's merge loop emits it over `texts`, forms it by a merge, and
    /// merges it into a longer token (LiteToken's final and intermediate frequencies; `encode::trace`).
    #[pyo3(signature = (texts, threads=0))]
    #[allow(clippy::type_complexity)]
    fn trace_batch(
        &self,
        py: Python<'_>,
        texts: Vec<PyBackedStr>,
        threads: usize,
    ) -> PyResult<(Vec<u64>, Vec<u64>, Vec<u64>)> {
        let t = py.allow_threads(|| self.tok.trace_batch(&texts, threads)).or_raise(py)?;
        Ok((t.emitted, t.formed, t.consumed))
    }

    /// `encode` with where each token came from: (ids, character spans, byte spans).
    #[pyo3(signature = (text, allowed_special=Some(vec![]), disallowed_special=Some(vec![])))]
    #[allow(clippy::type_complexity)]
    fn encode_with_offsets<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed_special: Option<Vec<String>>,
        disallowed_special: Option<Vec<String>>,
    ) -> PyResult<(Bound<'py, PyList>, Vec<(usize, usize)>, Vec<(usize, usize)>)> {
        let (spans, chars) = py
            .allow_threads(|| {
                let spans = self.tok.encode_with_offsets(text, &self.rule(&allowed_special, &disallowed_special)?)?;
                let chars = spans.chars(text);
                Ok::<_, CoreError>((spans, chars))
            })
            .or_raise(py)?;
        Ok((self.ints.list(py, &spans.ids)?, chars, spans.bytes))
    }

    /// A streaming decoder over this encoder (see `Decoder`).
    fn decoder(slf: Py<Encoder>) -> Decoder {
        Decoder { enc: slf, state: StreamDecoder::default() }
    }

    /// The bytes `ids` stand for. An id outside the vocabulary raises InputError naming it.
    fn decode_bytes<'py>(&self, py: Python<'py>, ids: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        let ids: Vec<u32> = match ids.extract() {
            Ok(ids) => ids,
            // A negative id, or one past u32: name it like any other unknown id when it fits i64.
            Err(e) => {
                match ids.extract::<Vec<i64>>().ok().and_then(|v| v.into_iter().find(|&i| u32::try_from(i).is_err())) {
                    Some(id) => return Err(to_py_err(py, CoreError::UnknownId { id, bound: self.tok.id_bound() })),
                    None => return Err(e),
                }
            }
        };
        let out = py.allow_threads(|| self.tok.decode_bytes(&ids)).or_raise(py)?;
        Ok(PyBytes::new(py, &out))
    }

    /// The bytes of one token as stored. An id outside the vocabulary raises InputError.
    fn token_bytes<'py>(&self, py: Python<'py>, id: i64) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = match u32::try_from(id) {
            Ok(id) => self.tok.token_bytes(id),
            Err(_) => Err(CoreError::UnknownId { id, bound: self.tok.id_bound() }),
        };
        Ok(PyBytes::new(py, bytes.or_raise(py)?))
    }

    /// The `k` best segmentations, best first, each with its total log probability (Unigram).
    fn nbest(&self, py: Python<'_>, text: &str, k: usize) -> PyResult<Vec<(Vec<u32>, f64)>> {
        py.allow_threads(|| self.tok.nbest(text, k)).or_raise(py)
    }

    /// One segmentation drawn with probability proportional to P(segmentation)^alpha (Unigram).
    fn sample(&self, py: Python<'_>, text: &str, alpha: f64, seed: u64) -> PyResult<Vec<u32>> {
        py.allow_threads(|| self.tok.sample(text, alpha, seed)).or_raise(py)
    }
}

/// A batch's texts as the core takes them (`&str`), read from Python's strs on the pool's
/// threads.
///
/// Why: taking them as `PyBackedStr` asks CPython for each str's UTF-8 form, one after
/// another with the GIL held, and a str that is not ASCII has none yet: it is encoded then.
/// The 24 MB batch of the peer benchmark (`benchmarks/versus.py`), 9.4 MB of it in 147 texts
/// that are not ASCII, spent 13-25 ms there on one thread before its parallel part began.
/// Here an ASCII str is borrowed as it is (its bytes are UTF-8), and the others are encoded
/// from their code points by the threads of the batch, without the GIL. A str holding a lone
/// surrogate has no UTF-8 form: CPython is asked for it then, and raises its
/// `UnicodeEncodeError`, which the Python side words.
struct StrViews<'a> {
    views: Vec<StrView>,
    /// The strs the views point into, kept alive by the caller.
    _texts: std::marker::PhantomData<&'a ()>,
}

/// A str's code points, as CPython stores them (PEP 393).
#[derive(Clone, Copy)]
enum StrView {
    Ascii(*const u8, usize),
    Latin1(*const u8, usize),
    Ucs2(*const u16, usize),
    Ucs4(*const u32, usize),
}

// SAFETY: a view exists only inside a `StrViews`, whose strs the caller's
// `&'a [Bound<PyString>]` keeps alive for as long as it exists; a str's code points never
// change once it is made, so reading them from any thread, without the GIL, races with nothing.
unsafe impl Send for StrView {}
unsafe impl Sync for StrView {}

impl<'a> StrViews<'a> {
    fn new(texts: &'a [Bound<'_, PyString>]) -> PyResult<StrViews<'a>> {
        use pyo3::ffi;
        let mut views = Vec::with_capacity(texts.len());
        for t in texts {
            let p = t.as_ptr();
            // SAFETY: the GIL is held and `p` is a live str (its `Bound`). `PyUnicode_READY`
            // (a no-op from 3.12) gives a legacy str its canonical form, after which its kind,
            // data and length describe it.
            let view = unsafe {
                if ffi::PyUnicode_READY(p) != 0 {
                    return Err(PyErr::fetch(t.py()));
                }
                let (n, d) = (ffi::PyUnicode_GET_LENGTH(p) as usize, ffi::PyUnicode_DATA(p));
                match ffi::PyUnicode_KIND(p) {
                    _ if ffi::PyUnicode_IS_ASCII(p) != 0 => StrView::Ascii(d as *const u8, n),
                    ffi::PyUnicode_1BYTE_KIND => StrView::Latin1(d as *const u8, n),
                    ffi::PyUnicode_2BYTE_KIND => StrView::Ucs2(d as *const u16, n),
                    _ => StrView::Ucs4(d as *const u32, n),
                }
            };
            views.push(view);
        }
        Ok(StrViews { views, _texts: std::marker::PhantomData })
    }

    /// Every text as UTF-8, in order: ASCII ones borrowed, the others encoded on `threads`
    /// threads (1: the calling thread; 0: the global pool). `Err(k)`: text k is the first in
    /// order that holds a lone surrogate (whichever thread met one first).
    fn utf8(&self, threads: usize) -> Result<Result<Vec<std::borrow::Cow<'a, str>>, usize>, CoreError> {
        use rayon::prelude::*;
        let one = |v: &StrView| v.utf8().ok_or(());
        let all: Result<Vec<_>, ()> = if threads == 1 || self.views.iter().all(|v| matches!(v, StrView::Ascii(..))) {
            self.views.iter().map(one).collect()
        } else {
            pool::install(threads, || self.views.par_iter().map(one).collect())?
        };
        Ok(all.map_err(|()| self.views.iter().position(|v| v.utf8().is_none()).unwrap_or(0)))
    }
}

impl StrView {
    /// The text as UTF-8, or `None` if it holds a lone surrogate.
    fn utf8<'a>(&self) -> Option<std::borrow::Cow<'a, str>> {
        use std::borrow::Cow;
        fn encode<T: Copy + Into<u32>>(units: &[T], most: usize) -> Option<String> {
            let mut s = String::with_capacity(units.len() * most);
            for &u in units {
                s.push(char::from_u32(u.into())?);
            }
            Some(s)
        }
        // SAFETY (every arm): the pointer and length describe a live str's code points (see
        // `StrViews`); an ASCII str's are bytes below 0x80, which are UTF-8.
        unsafe {
            Some(match *self {
                StrView::Ascii(p, n) => Cow::Borrowed(std::str::from_utf8_unchecked(std::slice::from_raw_parts(p, n))),
                StrView::Latin1(p, n) => Cow::Owned(encode(std::slice::from_raw_parts(p, n), 2)?),
                StrView::Ucs2(p, n) => Cow::Owned(encode(std::slice::from_raw_parts(p, n), 3)?),
                StrView::Ucs4(p, n) => Cow::Owned(encode(std::slice::from_raw_parts(p, n), 4)?),
            })
        }
    }
}

/// The error for text `k` of `texts`, which `StrViews::utf8` found holding a lone surrogate:
/// CPython's own `UnicodeEncodeError` for it.
fn surrogate_error(texts: &[Bound<'_, PyString>], k: usize) -> PyErr {
    match texts[k].to_str() {
        Err(e) => e,
        Ok(_) => pyo3::exceptions::PyUnicodeEncodeError::new_err(format!("text {k} of the batch is not valid Unicode")),
    }
}

/// Flat buffers of a batch's parts: the ids (native-endian u32) and n+1 offsets (native-endian u64).
fn flat_bytes(parts: &[Flat], n: usize) -> (Vec<u8>, Vec<u8>) {
    let total: usize = parts.iter().map(|p| p.ids.len()).sum();
    let mut ids: Vec<u8> = Vec::with_capacity(total * 4);
    let mut offsets: Vec<u8> = Vec::with_capacity((n + 1) * 8);
    offsets.extend_from_slice(&0u64.to_ne_bytes());
    for part in parts {
        let base = (ids.len() / 4) as u64;
        ids.extend(part.ids.iter().flat_map(|i| i.to_ne_bytes()));
        offsets.extend(part.ends.iter().flat_map(|&e| (base + e as u64).to_ne_bytes()));
    }
    (ids, offsets)
}

/// Text from ids given one at a time (`encode::StreamDecoder`): `step(id)` returns the text
/// the id completes, holding back the bytes of an unfinished character; `finish()` the rest.
#[pyclass(module = "tokreg._core")]
struct Decoder {
    enc: Py<Encoder>,
    state: StreamDecoder,
}

#[pymethods]
impl Decoder {
    fn step(&mut self, py: Python<'_>, id: i64) -> PyResult<String> {
        let enc = self.enc.get();
        let id =
            u32::try_from(id).map_err(|_| to_py_err(py, CoreError::UnknownId { id, bound: enc.tok.id_bound() }))?;
        self.state.step(enc.tok.encoder(), id).or_raise(py)
    }

    fn finish(&mut self) -> String {
        self.state.finish()
    }

    /// The bytes held back, waiting for the rest of their character.
    #[getter]
    fn pending<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.state.pending())
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let patterns = PyDict::new(m.py());
    for (name, regex) in PATTERNS {
        patterns.set_item(name, regex)?;
    }
    m.add("PATTERNS", patterns)?;
    m.add_function(wrap_pyfunction!(check_pattern, m)?)?;
    m.add_function(wrap_pyfunction!(say_and_exit_on_bus_error, m)?)?;
    m.add_function(wrap_pyfunction!(map_large_blocks_in_training, m)?)?;
    m.add_function(wrap_pyfunction!(count_byte, m)?)?;
    m.add_function(wrap_pyfunction!(content_header, m)?)?;
    m.add_function(wrap_pyfunction!(content_rows, m)?)?;
    m.add_function(wrap_pyfunction!(content_records, m)?)?;
    m.add_function(wrap_pyfunction!(merges_from_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(tokreg_file_members, m)?)?;
    m.add_function(wrap_pyfunction!(tokreg_file_rows, m)?)?;
    m.add_function(wrap_pyfunction!(train_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(extend_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(train_superword, m)?)?;
    m.add_function(wrap_pyfunction!(train_parity, m)?)?;
    m.add_function(wrap_pyfunction!(train_picky, m)?)?;
    m.add_function(wrap_pyfunction!(extend_wordpiece, m)?)?;
    m.add_function(wrap_pyfunction!(train_wordpiece, m)?)?;
    m.add_function(wrap_pyfunction!(train_unigram, m)?)?;
    m.add_class::<Encoder>()?;
    m.add_class::<Decoder>()?;
    m.add_class::<Counter>()?;
    m.add_class::<Counts>()?;
    m.add_class::<CountStats>()?;
    m.add_class::<BpeTrained>()?;
    m.add_class::<BpeExtended>()?;
    m.add_class::<WordPieceTrained>()?;
    m.add_class::<WordPieceExtended>()?;
    m.add_class::<UnigramTrained>()?;
    Ok(())
}
