//! One readable line, instead of the shell's bare "Bus error", when a file that the process
//! reads through a memory map is cut short by another program meanwhile.
//!
//! `tokreg tokenize` reads plain input files through read-only maps, and the built-encoder cache
//! maps its files: touching a mapped page that a truncation removed raises SIGBUS, which no
//! code can recover from (the faulting read would fault again). The console script installs
//! this handler at start-up, so the process says so in one line on stderr and exits with the
//! status given (135 there: 128 + SIGBUS, as a shell reports the signal). A library user's
//! process is left alone: only the `tokreg` command installs it.

use std::sync::OnceLock;

/// The line and the exit status, set once before the handler is installed (the handler only
/// reads them: an atomic load, safe in a signal handler).
static SAID: OnceLock<(Vec<u8>, i32)> = OnceLock::new();

/// On SIGBUS, write `line` to stderr and leave at once with `status` (`_exit`: no destructor,
/// no flush, nothing that could take a lock the faulting thread holds). The first call's line
/// and status are kept. Does nothing where there is no SIGBUS (not Unix).
#[allow(unsafe_code)]
pub fn say_and_exit_on_bus_error(line: &[u8], status: i32) -> std::io::Result<()> {
    let _ = SAID.set((line.to_vec(), status));
    #[cfg(unix)]
    {
        extern "C" fn said(_signal: libc::c_int) {
            if let Some((line, status)) = SAID.get() {
                // SAFETY: write(2) and _exit(2) are async-signal-safe; `line` lives for the process.
                unsafe {
                    libc::write(2, line.as_ptr().cast(), line.len());
                    libc::_exit(*status);
                }
            }
        }
        // SAFETY: a zeroed sigaction is a valid empty one; the handler only reads `SAID`, which
        // is set above, and calls async-signal-safe functions.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = said as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}
