//! Page-mapped schemes: a logical page maps to any physical page, garbage
//! collection copies valid pages off a victim block.

pub mod dftl;
pub mod fdp;
pub mod multilog;
pub mod pagemap;
pub mod subpage;
