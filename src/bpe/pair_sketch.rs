//! A sketch of every adjacent pair's count, made in one sweep of the cells before a large
//! alphabet's pairs are indexed (`train::index_sharded`): which pairs could be counted often
//! enough to matter, and about how many distinct pairs there are.
//!
//! One byte counter per hash bucket (a count-min sketch of one row): a pair adds its word's
//! count to its bucket, saturating at 255. A bucket holds the sum of the pairs that share it,
//! so a pair's bucket is never below its count: a pair whose bucket is below a threshold is
//! counted fewer times than that, for certain, and the index leaves it out (see `Index`).
//! Most of SuperBPE's stage-2 pairs are counted once or twice (784k pairs at 32k on 19.5 MB of
//! English, 13k of them 24 times or more): those in buckets below the threshold skip the
//! exact count's table (a hash, a probe and a cache miss or two each, and a slot), and the
//! tables hold only the candidates.
//!
//! The share of empty buckets gives the number of distinct pairs (linear counting, Whang et
//! al., 1990): what the tables are sized by when every pair is indexed.

use rayon::prelude::*;

/// The counters' histogram stops here: `train::heap_floor` reads counts up to it.
pub(super) const TOP: usize = 64;

pub(super) struct PairSketch {
    c: Vec<u8>,
    mask: usize,
}

impl PairSketch {
    /// Sketches the pairs `each(range, f)` gives for each range of cells (`f(hash, count)` per
    /// pair that starts in the range), the `cells` in parts on every thread of the pool, each
    /// with a sketch of its own, added at the end (the same counters whatever the parts).
    pub fn build(cells: usize, each: impl Fn(std::ops::Range<usize>, &mut dyn FnMut(u64, u64)) + Sync) -> PairSketch {
        // A bucket per two cells (at most 4 MB): about one pair in five or fewer shares a bucket.
        let size = (cells / 2).next_power_of_two().clamp(1 << 12, 1 << 22);
        let parts = rayon::current_num_threads().clamp(1, 8);
        let cuts: Vec<usize> = (0..=parts).map(|j| j * cells / parts).collect();
        let mut sketches: Vec<PairSketch> = (0..parts)
            .into_par_iter()
            .map(|j| {
                let mut s = PairSketch { c: vec![0; size], mask: size - 1 };
                each(cuts[j]..cuts[j + 1], &mut |h, count| s.add(h, count));
                s
            })
            .collect();
        let mut sum = sketches.swap_remove(0);
        for other in &sketches {
            sum.c.par_chunks_mut(1 << 16).zip(other.c.par_chunks(1 << 16)).for_each(|(a, b)| {
                for (x, &y) in a.iter_mut().zip(b) {
                    *x = x.saturating_add(y);
                }
            });
        }
        sum
    }

    /// The bucket of a pair's hash, mixed once more: FxHash of keys as regular as pairs of
    /// token ids (a grid of them) leaves some of its bits poorly spread, which would pile pairs
    /// into fewer buckets than chance does.
    #[inline]
    fn at(&self, h: u64) -> usize {
        let x = (h ^ h >> 32).wrapping_mul(0xd6e8_feb8_6659_fd93);
        (x ^ x >> 32) as usize & self.mask
    }

    #[inline]
    fn add(&mut self, h: u64, count: u64) {
        let i = self.at(h);
        self.c[i] = self.c[i].saturating_add(count.min(255) as u8);
    }

    /// At least the count of the pair of hash `h` (up to 255).
    #[inline]
    pub fn bound(&self, h: u64) -> u64 {
        self.c[self.at(h)] as u64
    }

    /// Buckets by value: `[c]` how many hold `c` (`[TOP]`: `TOP` or more), `[0]` the empty ones.
    pub fn histogram(&self) -> [u64; TOP + 1] {
        let mut h = [0u64; TOP + 1];
        for &x in &self.c {
            h[(x as usize).min(TOP)] += 1;
        }
        h
    }

    /// About how many distinct pairs were added (from `histogram`'s empty buckets).
    pub fn distinct(&self, histogram: &[u64; TOP + 1]) -> usize {
        let m = self.c.len() as f64;
        let empty = (histogram[0] as f64).max(1.0);
        (m * (m / empty).ln()).round() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_bounds_its_pairs_and_empty_buckets_count_them() {
        // 20,000 pairs over 200,000 cells, pair i counted 1 + i % 7 times (some 300 more)
        let pairs: Vec<(u64, u64)> = (0..20_000u64)
            .map(|i| {
                (super::super::pair_table::pair_hash((i << 32) | (i % 97)), 1 + i % 7 + (i % 1000 == 0) as u64 * 300)
            })
            .collect();
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let s = pool.install(|| {
                PairSketch::build(200_000, |range, f| {
                    for (i, &(h, c)) in pairs.iter().enumerate() {
                        if range.contains(&(i * 10)) {
                            f(h, c)
                        }
                    }
                })
            });
            assert!(pairs.iter().all(|&(h, c)| s.bound(h) >= c.min(255)));
            let hist = s.histogram();
            assert_eq!(hist.iter().sum::<u64>(), s.c.len() as u64);
            let d = s.distinct(&hist) as f64;
            assert!((d / 20_000.0 - 1.0).abs() < 0.05, "{d}");
        }
    }
}
