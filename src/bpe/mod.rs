//! Byte-pair encoding: the trainer (`train`), tiktoken's rank-map encoder (`rank`) used for
//! byte-level vocabularies, and the merge-table encoder (`merges`) used for classic
//! character-level BPE with an end-of-word marker.

pub mod merges;
mod min_tree;
mod piece_cache;
pub mod rank;
mod rank_table;
pub mod train;

pub use merges::MergeEncoder;
pub use rank::RankEncoder;
pub use train::{train, Merge, TrainOutput};
