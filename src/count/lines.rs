//! Line framing shared by the counters (`Counter`, `RunCounter`): chunks of any size in, whole
//! lines out. The bytes after a chunk's last `\n` wait for the next chunk; an unfinished line
//! that outgrows `LONG_LINE` is passed on in cuts at character boundaries (see `counter.rs`'s
//! header), so a file without line breaks is counted in bounded memory.

use super::counter::{cut, LONG_LINE};
use crate::error::CoreError;

/// The unfinished line carried from one chunk to the next.
#[derive(Default)]
pub(super) struct Lines {
    tail: Vec<u8>,
}

impl Lines {
    /// Passes the complete lines of `data` (after the unfinished line of the previous chunk) to
    /// `block`, then the cuts of an unfinished line over `LONG_LINE`; gives how many it cut.
    pub(super) fn feed(
        &mut self,
        data: &[u8],
        mut block: impl FnMut(&[u8]) -> Result<(), CoreError>,
    ) -> Result<u64, CoreError> {
        if let Some(last) = memchr::memrchr(b'\n', data) {
            let mut body = &data[..=last];
            if !self.tail.is_empty() {
                let first = memchr::memchr(b'\n', body).unwrap_or(0);
                let mut line = std::mem::take(&mut self.tail);
                line.extend_from_slice(&body[..=first]);
                block(&line)?;
                body = &body[first + 1..];
            }
            block(body)?;
            self.tail.extend_from_slice(&data[last + 1..]);
        } else {
            self.tail.extend_from_slice(data);
        }
        let mut cuts = 0;
        while self.tail.len() > LONG_LINE {
            let end = cut(&self.tail, LONG_LINE);
            let rest = self.tail.split_off(end);
            let line = std::mem::replace(&mut self.tail, rest);
            cuts += 1;
            block(&line)?;
        }
        Ok(cuts)
    }

    /// The last line of an input (it may lack its `\n`), leaving nothing carried.
    pub(super) fn end(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.tail)
    }
}
