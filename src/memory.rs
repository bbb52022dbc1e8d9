//! Giving freed heap memory back to the system between phases of a run.

/// Hands the heap's free pages back to the system. glibc keeps what a phase freed for later
/// allocations of the same sizes, which the next phase does not make (and memory freed on a
/// worker thread stays in that thread's arena, which the calling thread never reuses): called
/// after counting, before SuperBPE's second stage and after training, so that the next phase's
/// peak starts from what is really in use rather than adding to the last one's. Elsewhere than
/// glibc the allocator decides, and this does nothing.
#[allow(unsafe_code)]
pub fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: glibc's malloc_trim only releases free memory; it takes no pointers.
        unsafe { malloc_trim(0) };
    }
}
