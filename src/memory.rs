//! Giving freed heap memory back to the system between phases of a run, and asking for memory
//! ahead of its use (`prefetch`).

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

/// Whether this process asked training to map large blocks (`want_large_blocks_mapped`).
static WANTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks that training, from its next start, map large blocks apart from the heap
/// (`map_large_blocks`). The `tokreg train` command asks, as a process that ends after
/// training; a library process (a notebook that trains, then encodes) does not, and keeps glibc's
/// adaptive threshold for the rest of its life.
pub fn want_large_blocks_mapped() {
    WANTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Has every allocation from 128 KB up mapped apart from the heap, for the rest of the process
/// (glibc's `M_MMAP_THRESHOLD`, fixed at its starting value; a no-op after the first call, off
/// glibc, and unless the process asked for it: `want_large_blocks_mapped`). glibc raises that threshold each time a mapped block is freed, up to the block's
/// size: after counting has freed its 4 MB chunks of text, the trainer's arrays, which grow by
/// doubling, come from the heap instead, and every doubling leaves its old block behind as a
/// hole that the heap keeps. Mapped, a growing array is moved by the kernel (`mremap`, no copy)
/// and a freed one goes back to the system at once. Called when training starts, not when
/// counting does: counting's tables, made anew for every chunk, would then be fresh zeroed
/// pages each time (5-6k more page faults at 6-20 MB) where the heap reuses its pages.
/// `tokreg train`, kernel.txt 20 MB, 32k (4 runs each, load 8-12): the process's peak
/// 47.5-50.4 -> 45.2-46.3 MB, about 1k more page faults, CPU within the machine's noise.
#[allow(unsafe_code)]
pub fn map_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if WANTED.load(std::sync::atomic::Ordering::Relaxed) {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            extern "C" {
                fn mallopt(param: std::os::raw::c_int, value: std::os::raw::c_int) -> std::os::raw::c_int;
            }
            const M_MMAP_THRESHOLD: std::os::raw::c_int = -3;
            // SAFETY: mallopt only changes the allocator's parameters; it takes no pointers.
            unsafe { mallopt(M_MMAP_THRESHOLD, 128 << 10) };
        });
    }
}

/// Asks the processor to bring `x` into cache, without waiting for it (a hint: nothing on
/// other targets).
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: a prefetch reads nothing the program sees and never faults; SSE, which it needs,
    // is part of every x86_64 processor; and the address is of a live reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((x as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
