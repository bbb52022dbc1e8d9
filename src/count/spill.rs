//! Counting out of core: a full table is written as a run (entries sorted by bytes) to a
//! temporary file, and `merge_runs` streams the sum of all runs in byte order.
//!
//! Run file: per entry, u32 length (LE), the piece bytes, u64 count (LE). A run's file is
//! removed when the run is dropped, finished or not.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::Entry;
use crate::error::CoreError;

/// The next entry of run `k` in the merge: (piece, run, count), smallest piece first.
type Head = Reverse<(Box<[u8]>, usize, u64)>;

pub struct Run {
    path: PathBuf,
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn io_error(path: &Path, e: std::io::Error) -> CoreError {
    CoreError::input(format!(
        "cannot write the counting spill file {} ({e}); free disk space there or point TMPDIR elsewhere",
        path.display()
    ))
}

impl Run {
    pub fn write(dir: &Path, entries: &[(Box<[u8]>, u64)]) -> Result<Run, CoreError> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("tokreg-count-{}-{n}.run", std::process::id()));
        let file = OpenOptions::new().write(true).create_new(true).open(&path).map_err(|e| io_error(&path, e))?;
        let run = Run { path };
        let mut w = BufWriter::with_capacity(1 << 20, file);
        for (k, v) in entries {
            w.write_all(&(k.len() as u32).to_le_bytes())
                .and_then(|_| w.write_all(k))
                .and_then(|_| w.write_all(&v.to_le_bytes()))
                .map_err(|e| io_error(&run.path, e))?;
        }
        w.flush().map_err(|e| io_error(&run.path, e))?;
        Ok(run)
    }

    fn reader(&self) -> Result<RunReader, CoreError> {
        let f = File::open(&self.path).map_err(|e| io_error(&self.path, e))?;
        Ok(RunReader { r: BufReader::with_capacity(1 << 20, f) })
    }
}

struct RunReader {
    r: BufReader<File>,
}

impl RunReader {
    fn next(&mut self) -> Result<Option<Entry>, CoreError> {
        let mut len = [0u8; 4];
        match self.r.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(CoreError::input(format!("cannot read a counting spill file back ({e})"))),
        }
        let mut piece = vec![0u8; u32::from_le_bytes(len) as usize];
        let mut count = [0u8; 8];
        self.r
            .read_exact(&mut piece)
            .and_then(|_| self.r.read_exact(&mut count))
            .map_err(|e| CoreError::input(format!("cannot read a counting spill file back ({e})")))?;
        Ok(Some((piece.into_boxed_slice(), u64::from_le_bytes(count))))
    }
}

/// The entries of all runs, in byte order, equal pieces summed. The runs' files are removed
/// when the iterator is dropped.
pub fn merge_runs(runs: Vec<Run>) -> Result<impl Iterator<Item = Result<Entry, CoreError>>, CoreError> {
    let mut readers = Vec::with_capacity(runs.len());
    let mut heap = BinaryHeap::new();
    for (k, run) in runs.iter().enumerate() {
        let mut r = run.reader()?;
        if let Some((piece, n)) = r.next()? {
            heap.push(Reverse((piece, k, n)));
        }
        readers.push(r);
    }
    let mut failed = false;
    Ok(std::iter::from_fn(move || {
        let _keep = &runs;
        if failed {
            return None;
        }
        let Reverse((piece, k, mut n)) = heap.pop()?;
        let mut advance = |k: usize, heap: &mut BinaryHeap<Head>| -> Result<(), CoreError> {
            if let Some((p, c)) = readers[k].next()? {
                heap.push(Reverse((p, k, c)));
            }
            Ok(())
        };
        if let Err(e) = advance(k, &mut heap) {
            failed = true;
            return Some(Err(e));
        }
        while heap.peek().is_some_and(|Reverse((p, _, _))| *p == piece) {
            let Some(Reverse((_, k2, c))) = heap.pop() else { break };
            n = n.saturating_add(c);
            if let Err(e) = advance(k2, &mut heap) {
                failed = true;
                return Some(Err(e));
            }
        }
        Some(Ok((piece, n)))
    }))
}
