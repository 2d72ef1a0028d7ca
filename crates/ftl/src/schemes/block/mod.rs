//! Block- and hybrid-mapped schemes: a logical block's pages live in place in
//! a data block, with replacement or log blocks folded or merged back into it
//! (NFTL over the block-mapping unit [`crate::blockmap`]; BAST, FAST and
//! Janus-FTL over the hybrid core [`crate::hybrid`] and the map log
//! [`crate::maplog`]).

pub mod bast;
pub mod fast;
pub mod janus;
pub mod nftl;
