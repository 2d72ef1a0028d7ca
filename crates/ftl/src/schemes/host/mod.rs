//! Devices with a host interface beyond the block commands ([`crate::Extension`]):
//! FlashTier's solid-state cache ([`crate::SolidStateCache`]) and the
//! Nameless-Write device ([`crate::Nameless`]).

pub mod nameless;
pub mod ssc;
