//! The pairs a merge changes, gathered by neighbour before they are looked up.
//!
//! Joining `a b` into `z` at a position lowers the pairs `(l, a)` and `(b, r)` around it and
//! raises `(l, z)` and `(z, r)`, by the word's count: four lookups in the pair table a join.
//! The joins of one merge often share a neighbour, so the merge loop adds each join's count to
//! its neighbour's entry here (found through a token-indexed array that stays in cache) and
//! looks up each neighbour's two pairs once. The counts after the merge are the same (sums),
//! and the positions of each pair made are kept in the order met, ascending. (SuperBPE's stage
//! 2 at 32k on 19.5 MB of English: 539k sides of joins, 331k neighbour entries.)
//!
//! A merge's joins are gathered up to `BATCH` at a time, so that the scratch stays small
//! whatever the corpus (8 bytes a join and side, and the entries).

/// Joins gathered before their neighbours' pairs are looked up.
pub(super) const BATCH: usize = if cfg!(test) { 5 } else { 1 << 14 };

/// No entry (in `Neighbours::at`).
const NONE: u32 = u32::MAX;

/// One neighbour on one side of the pair merged.
#[derive(Clone, Copy)]
pub(super) struct Near {
    pub token: u32,
    /// The summed counts of the words of its joins.
    pub count: i64,
    /// Its joins.
    pub joins: u32,
    /// The slot of the pair made with it (set by the merge loop).
    pub slot: u32,
}

/// The left (0) and right (1) neighbours of one batch of joins.
#[derive(Default)]
pub(super) struct Neighbours {
    /// token -> its entry on each side in this batch (`NONE`: none)
    at: Vec<[u32; 2]>,
    /// the entries, in order of first sight
    pub near: [Vec<Near>; 2],
    /// (entry, position of the pair made) for each join, in the order met
    pub made: [Vec<(u32, u32)>; 2],
    joins: usize,
}

impl Neighbours {
    /// Adds a join beside `token` on `side` in a word counted `count` times; the pair made
    /// starts at `at`.
    #[inline]
    pub fn add(&mut self, side: usize, token: u32, count: i64, at: u32) {
        let t = token as usize;
        if t >= self.at.len() {
            self.at.resize(t + 1, [NONE; 2]);
        }
        let mut e = self.at[t][side];
        if e == NONE {
            e = self.near[side].len() as u32;
            self.at[t][side] = e;
            self.near[side].push(Near { token, count: 0, joins: 0, slot: 0 });
        }
        let n = &mut self.near[side][e as usize];
        n.count += count;
        n.joins += 1;
        self.made[side].push((e, at));
    }

    /// Counts a join (both of its sides added); true once a batch is full.
    #[inline]
    pub fn joined(&mut self) -> bool {
        self.joins += 1;
        self.joins >= BATCH
    }

    pub fn is_empty(&self) -> bool {
        self.joins == 0
    }

    /// Forgets the batch (after the merge loop has applied it).
    pub fn clear(&mut self) {
        for side in 0..2 {
            for n in &self.near[side] {
                self.at[n.token as usize][side] = NONE;
            }
            self.near[side].clear();
            self.made[side].clear();
        }
        self.joins = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_beside_one_token_share_an_entry_and_keep_their_order() {
        let mut n = Neighbours::default();
        n.add(0, 7, 2, 10);
        n.add(1, 7, 5, 11);
        n.add(0, 3, 1, 20);
        n.add(0, 7, 4, 30);
        let left: Vec<(u32, i64, u32)> = n.near[0].iter().map(|e| (e.token, e.count, e.joins)).collect();
        assert_eq!(left, [(7, 6, 2), (3, 1, 1)]);
        assert_eq!(n.made[0], [(0, 10), (1, 20), (0, 30)]);
        assert_eq!((n.near[1][0].token, n.near[1][0].count), (7, 5));
        assert!(!n.joined() && !n.is_empty());
        n.clear();
        assert!(n.is_empty() && n.near[0].is_empty() && n.made[1].is_empty());
        // a cleared batch starts its entries afresh
        n.add(0, 3, 9, 40);
        assert_eq!((n.near[0][0].token, n.near[0][0].count, n.made[0][0]), (3, 9, (0, 40)));
    }
}
