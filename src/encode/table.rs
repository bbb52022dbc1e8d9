//! `Table<T>`: a read-only array that an encoder probes in its hot loop, either owned (built in
//! this process) or read in place from the bytes of a frozen encoder (`frozen.rs`) that the
//! caller keeps alive, such as a memory map of its cache file.
//!
//! Why in place: a fresh process that copies o200k's 17 MB of tables out of a mapped file pays
//! a page fault for every 4 KB of the fresh memory (about 4,300, 8-15 ms on a shared 2-core
//! machine), more than it then spends encoding. Used in place, the file's pages are the page
//! cache's, shared by every process that maps them, and nothing is copied.
//!
//! Safety rests on two things, both checked or stated where they are made:
//! - `Plain`: a type whose every bit pattern is a valid value and which has no padding, so any
//!   bytes of its size may be viewed as one (the tables hold integers and records of integers);
//! - `Backing`: bytes that stay at one address, unchanged, for as long as the value lives (the
//!   table holds it, through an `Arc`).
//!
//! A table is viewed in place only when the bytes are suitably aligned and the machine is
//! little-endian (the frozen layout's byte order); otherwise it is copied, and the encoder is
//! the same. Reading through `Deref` costs what reading a `Vec` does: a pointer and a length.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// A type that can be viewed in place in any bytes of its size and alignment.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes must be a valid value, and the type must have
/// no padding bytes (so that writing it out never reads uninitialised memory).
pub unsafe trait Plain: Copy + Send + Sync + 'static {}

// SAFETY: integers have no padding and no invalid bit patterns.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for u16 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}

/// A type for which all-zero bytes are a valid value (every `Plain` type is one).
///
/// # Safety
/// A value whose bytes are all zero must be a valid value of the type.
pub unsafe trait Zeroable: Copy {}

// SAFETY: every bit pattern of a `Plain` type is valid, all zeros included.
unsafe impl<T: Plain> Zeroable for T {}

/// `n` items whose bytes are all zero, taken zeroed from the allocator and never written here:
/// for a large `n` these are fresh pages that the kernel zeroes on first touch, so a table of
/// which a short call touches a few slots (a thread's piece cache) costs it a few page faults
/// instead of one per 4 KB of the table (`vec![item; n]` writes every item).
pub fn zeroed<T: Zeroable>(n: usize) -> Vec<T> {
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Vec::new();
    }
    let layout = std::alloc::Layout::array::<T>(n).expect("a table that fits memory");
    // SAFETY: the layout is not empty (checked above); the allocation has room for `n` items of
    // `T`, aligned, all of whose bytes are zero, which `Zeroable` says is a valid `T`; the Vec
    // takes it with the same layout it will free it with.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout) as *mut T;
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Vec::from_raw_parts(ptr, n, n)
    }
}

/// Bytes a table may be read from in place.
///
/// # Safety
/// `bytes` must return the same slice, at the same address and with the same contents, for
/// as long as the value lives (moving the value, e.g. into an `Arc`, must not move the bytes).
pub unsafe trait Backing: Send + Sync {
    fn bytes(&self) -> &[u8];
}

// SAFETY: a Vec's heap buffer does not move when the Vec does, and behind the `Arc` a table
// holds it by, nothing can change or reallocate it.
unsafe impl Backing for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// A read-only array of `T`: owned, or borrowed in place from a `Backing` it keeps alive.
pub struct Table<T: Plain> {
    ptr: *const T,
    len: usize,
    /// The elements when owned (`ptr` is its buffer), empty when borrowed.
    own: Vec<T>,
    /// What the elements are borrowed from, kept alive (and in place) as long as the table is.
    _backing: Option<Arc<dyn Backing>>,
}

// SAFETY: a table is a `&[T]` into memory that it owns or keeps alive, never written through
// shared references; `T: Plain` and `Backing` are `Send + Sync`.
unsafe impl<T: Plain> Send for Table<T> {}
// SAFETY: as above.
unsafe impl<T: Plain> Sync for Table<T> {}

impl<T: Plain> From<Vec<T>> for Table<T> {
    fn from(own: Vec<T>) -> Table<T> {
        Table { ptr: own.as_ptr(), len: own.len(), own, _backing: None }
    }
}

impl<T: Plain> Table<T> {
    /// The `n` items of `T` at the start of `bytes`, which lie inside `backing`'s bytes: viewed
    /// in place when they are aligned for `T` and the machine is little-endian, else `None`
    /// (the caller then copies). `bytes` must hold at least `n` items.
    pub fn borrowed(backing: &Arc<dyn Backing>, bytes: &[u8], n: usize) -> Option<Table<T>> {
        let size = n.checked_mul(std::mem::size_of::<T>())?;
        let all = backing.bytes();
        let (start, end) = (bytes.as_ptr() as usize, bytes.as_ptr() as usize + size);
        let inside = size <= bytes.len() && start >= all.as_ptr() as usize && end <= all.as_ptr() as usize + all.len();
        let aligned = start % std::mem::align_of::<T>() == 0;
        (cfg!(target_endian = "little") && inside && aligned).then(|| Table {
            ptr: bytes.as_ptr() as *const T,
            len: n,
            own: Vec::new(),
            _backing: Some(Arc::clone(backing)),
        })
    }

    /// Whether the items are read in place from a backing (false: owned).
    pub fn is_borrowed(&self) -> bool {
        self._backing.is_some()
    }

    /// The items, writable: a borrowed table is copied first (it becomes owned).
    pub fn edit(&mut self) -> Edit<'_, T> {
        if self._backing.is_some() {
            *self = Table::from(self.to_vec());
        }
        Edit { table: self }
    }
}

impl<T: Plain> Deref for Table<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` and `len` are the buffer of `own` (set whenever it changes: `From`,
        // `Edit::drop`), or `len` items inside the bytes `_backing` keeps in place, aligned for
        // `T` and of a `Plain` type (checked in `borrowed`).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// `Table::edit`: the owned items as a `Vec`, the table's view of them brought up to date when
/// it drops (the Vec may have grown and moved).
pub struct Edit<'a, T: Plain> {
    table: &'a mut Table<T>,
}

impl<T: Plain> Deref for Edit<'_, T> {
    type Target = Vec<T>;

    fn deref(&self) -> &Vec<T> {
        &self.table.own
    }
}

impl<T: Plain> DerefMut for Edit<'_, T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.table.own
    }
}

impl<T: Plain> Drop for Edit<'_, T> {
    fn drop(&mut self) {
        self.table.ptr = self.table.own.as_ptr();
        self.table.len = self.table.own.len();
    }
}

/// The items of a table, copied out of little-endian bytes (`n` of `N` bytes each): what a
/// table that cannot be viewed in place is read as.
pub fn copied<T: Plain, const N: usize>(bytes: &[u8], n: usize, get: impl Fn([u8; N]) -> T) -> Vec<T> {
    bytes[..n * N].chunks_exact(N).map(|c| get(c.try_into().expect("chunks of N"))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_borrowed_table_reads_the_backing_in_place_and_copies_on_edit() {
        let words: Vec<u8> = (0u32..16).flat_map(|i| i.to_le_bytes()).collect();
        let backing: Arc<dyn Backing> = Arc::new(words);
        let all = backing.bytes();
        let at = all.as_ptr().align_offset(4);
        let n = (all.len() - at) / 4;
        let mut t = Table::<u32>::borrowed(&backing, &all[at..], n).expect("aligned, inside");
        assert!(t.is_borrowed());
        assert_eq!(t.as_ptr() as usize, all[at..].as_ptr() as usize);
        let expect: Vec<u32> = copied(&all[at..], n, u32::from_le_bytes);
        assert_eq!(&t[..], &expect[..]);
        t.edit().push(7);
        assert!(!t.is_borrowed());
        assert_eq!(t.len(), n + 1);
        assert_eq!(t[n], 7);
        // Misaligned, too long, or outside the backing: not viewed in place.
        assert!(Table::<u32>::borrowed(&backing, &all[at + 1..], 1).is_none());
        assert!(Table::<u32>::borrowed(&backing, &all[at..], n + 1).is_none());
        let elsewhere = [0u8; 64];
        let off = elsewhere.as_ptr().align_offset(4);
        assert!(Table::<u32>::borrowed(&backing, &elsewhere[off..], 1).is_none());
    }

    #[test]
    fn zeroed_items_are_zero() {
        let v: Vec<u64> = zeroed(100_000);
        assert_eq!(v.len(), 100_000);
        assert!(v.iter().all(|&x| x == 0));
        assert!(zeroed::<u32>(0).is_empty());
    }

    #[test]
    fn an_owned_table_follows_its_vec() {
        let mut t = Table::from(vec![1u64, 2, 3]);
        for i in 0..1000 {
            t.edit().push(i);
        }
        assert_eq!(t.len(), 1003);
        assert_eq!(t[1002], 999);
        assert_eq!(&t[..3], &[1, 2, 3]);
    }
}
