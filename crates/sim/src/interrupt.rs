//! Stopping runs from outside (Ctrl-C in the CLI).
//!
//! [`interrupt`] asks every run of the process to stop: each stops dispatching
//! requests at the next one, skips the final read-back of every page, and
//! ends with [`crate::SimError::Interrupted`] carried in
//! [`crate::SimError::Stopped`] with the report of what it measured, so a long
//! run stopped by hand still leaves its figures, marked as partial.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Asks every run of the process to stop (safe from a signal handler).
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// Whether [`interrupt`] was called (and not cleared since).
#[inline]
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Lets runs go on again (the next runs of a session that was interrupted).
pub fn clear_interrupt() {
    INTERRUPTED.store(false, Ordering::Relaxed);
}
