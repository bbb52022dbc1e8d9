//! Byte-pair encoding: the merge loop (`train`) and the corpus run around it (`corpus`),
//! tiktoken's rank-map encoder (`rank`) used for byte-level vocabularies, the recovery of a
//! rank map's merges (`recover`), and the merge-table encoder (`merges`) used for classic
//! character-level BPE with an end-of-word marker; superword BPE (SuperBPE: `superword` runs and
//! encoder, `superword_train` its two stages); parity-aware BPE (`parity`: each merge for the
//! language compressed worst); PickyBPE (`picky_train` learns merges and removals, `picky`
//! replays them); a version without its residues (`residue_free`).

mod corpus;
pub mod distinct_pass;
mod dropout;
mod extend;
pub mod merges;
mod min_tree;
mod neighbours;
mod pair_sketch;
mod pair_table;
mod parity;
mod picky;
mod picky_train;
mod piece_cache;
pub mod rank;
mod rank_table;
mod recover;
mod residue_free;
mod seams;
pub mod superword;
mod superword_train;
pub mod train;

pub use corpus::{train_counts, CorpusConfig, CorpusOutput};
pub use distinct_pass::{same_bytes, Distinct, Merger};
pub use extend::{extend, ExtendConfig, ExtendOutput};
pub use merges::MergeEncoder;
pub use parity::{train_parity, Costs, ParityConfig, ParityOutput};
pub use picky::PickyEncoder;
pub use picky_train::{train_picky, PickyConfig, PickyOutput, Removal};
pub use rank::RankEncoder;
pub use recover::merges_from_ranks;
pub use residue_free::ResidueFree;
pub use superword::SuperwordEncoder;
pub use superword_train::{train_superword, SuperwordConfig, SuperwordOutput};
pub use train::{train, Merge, Snapshot, TrainConfig, TrainOutput, Words};
