//! Byte-pair encoding: the trainer (`train`), tiktoken's rank-map encoder (`rank`) used for
//! byte-level vocabularies, and the merge-table encoder (`merges`) used for classic
//! character-level BPE with an end-of-word marker.

pub mod merges;
pub mod rank;
pub mod train;

pub use merges::MergeEncoder;
pub use rank::RankEncoder;
pub use train::{train, Merge, TrainOutput};
