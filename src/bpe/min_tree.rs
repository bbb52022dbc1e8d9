//! The lowest value of an array of `u32` and its leftmost position, kept up to date while
//! single slots change: what the BPE merge loop needs for long pieces ("merge the lowest rank,
//! the leftmost on ties").
//!
//! Why not a binary heap: on a piece of 10 MB (one repeated character is one piece) a heap of
//! (rank, position) entries is 80 MB that every push and pop walks at random, so each step
//! costs main-memory misses and the time per byte grows with the size. Here the array is cut
//! into blocks of 32 slots, and a complete binary tree holds the minimum of each block and of
//! each pair of subtrees. A change rescans its block (two cache lines, vectorized) and walks up
//! until a node keeps its value; finding the minimum walks down from the root, left first on
//! ties, and scans one block. The tree is 1/16 the size of the array and its upper levels stay
//! in cache, and the merge loop changes slots close to each other, so the cost per step stays
//! flat from kilobytes to many megabytes.

const BLOCK: usize = 32;
/// The value meaning "no pair": never the minimum.
pub const NONE: u32 = u32::MAX;

pub struct MinTree {
    vals: Vec<u32>,
    /// `tree[1]` is the minimum of everything; `tree[leaves + b]` the minimum of block `b`;
    /// `tree[k]` the smaller of `tree[2k]` and `tree[2k + 1]`.
    tree: Vec<u32>,
    leaves: usize,
}

impl MinTree {
    pub fn new(mut vals: Vec<u32>) -> MinTree {
        let blocks = vals.len().div_ceil(BLOCK).max(1);
        vals.resize(blocks * BLOCK, NONE);
        let leaves = blocks.next_power_of_two();
        let mut tree = vec![NONE; 2 * leaves];
        for (b, block) in vals.chunks_exact(BLOCK).enumerate() {
            tree[leaves + b] = block_min(block);
        }
        for k in (1..leaves).rev() {
            tree[k] = tree[2 * k].min(tree[2 * k + 1]);
        }
        MinTree { vals, tree, leaves }
    }

    #[inline]
    pub fn set(&mut self, i: usize, v: u32) {
        if self.vals[i] == v {
            return;
        }
        self.vals[i] = v;
        let b = i / BLOCK;
        let mut k = self.leaves + b;
        let m = block_min(&self.vals[b * BLOCK..(b + 1) * BLOCK]);
        if self.tree[k] == m {
            return;
        }
        self.tree[k] = m;
        while k > 1 {
            k /= 2;
            let m = self.tree[2 * k].min(self.tree[2 * k + 1]);
            if self.tree[k] == m {
                return;
            }
            self.tree[k] = m;
        }
    }

    /// (lowest value, its leftmost position), or None when every slot is `NONE`.
    #[inline]
    pub fn min(&self) -> Option<(u32, usize)> {
        let best = self.tree[1];
        if best == NONE {
            return None;
        }
        let mut k = 1;
        while k < self.leaves {
            k = if self.tree[2 * k] == best { 2 * k } else { 2 * k + 1 };
        }
        let start = (k - self.leaves) * BLOCK;
        let at = self.vals[start..start + BLOCK].iter().position(|&v| v == best)?;
        Some((best, start + at))
    }
}

#[inline(always)]
fn block_min(block: &[u32]) -> u32 {
    block.iter().copied().fold(NONE, u32::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_a_scan() {
        let mut rnd = crate::test_data::rng(0x2545_f491_4f6c_dd1d);
        for n in [1usize, 5, 31, 32, 33, 100, 1000, 4097] {
            let mut plain: Vec<u32> = (0..n).map(|_| if rnd(4) == 0 { NONE } else { rnd(50) as u32 }).collect();
            let mut t = MinTree::new(plain.clone());
            for _ in 0..3000 {
                let want = plain.iter().enumerate().filter(|(_, &v)| v != NONE).min_by_key(|(i, &v)| (v, *i));
                assert_eq!(t.min(), want.map(|(i, &v)| (v, i)), "n {n}");
                let i = rnd(n as u64) as usize;
                let v = if rnd(3) == 0 { NONE } else { rnd(50) as u32 };
                plain[i] = v;
                t.set(i, v);
            }
        }
    }
}
