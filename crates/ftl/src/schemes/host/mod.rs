//! Devices with a host interface beyond the block commands ([`crate::Extension`]):
//! FlashTier's solid-state cache ([`crate::SolidStateCache`]), the
//! Nameless-Write device ([`crate::Nameless`]) and the zoned device
//! ([`crate::Zoned`]).

pub mod nameless;
pub mod ssc;
pub mod zns;
