//! Checks of the configuration keys many schemes share, one function a key, so
//! that every scheme refuses the same values with the same message (naming the
//! scheme, the key and what is wrong) under the same key path (`ftl.KEY`).

use crate::FtlError;

/// Why `gc_free_blocks` must be at least 1, as most schemes say it (the text
/// after "must be at least 1" in [`gc_free_blocks`]'s message).
pub const GC_NEEDS_A_FREE_BLOCK: &str = " (GC needs a free block to copy into)";

/// Checks `scheme`'s `over_provisioning`, the fraction of the good flash held
/// back from the host: in [0, 1) (NaN is refused).
pub fn over_provisioning(scheme: &str, over_provisioning: f64) -> Result<(), FtlError> {
    if !(0.0..1.0).contains(&over_provisioning) {
        return Err(FtlError::config(
            "ftl.over_provisioning",
            format!("{scheme}.over_provisioning must be in [0, 1), got {over_provisioning}"),
        ));
    }
    Ok(())
}

/// Checks `scheme`'s `gc_free_blocks`, the free blocks at or below which
/// garbage collection runs: at least 1. `why` follows "must be at least 1" in
/// the message ([`GC_NEEDS_A_FREE_BLOCK`] for most schemes; empty for none).
pub fn gc_free_blocks(scheme: &str, gc_free_blocks: u32, why: &str) -> Result<(), FtlError> {
    if gc_free_blocks == 0 {
        return Err(FtlError::config("ftl.gc_free_blocks", format!("{scheme}.gc_free_blocks must be at least 1{why}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_keys_are_refused_with_the_key_and_the_scheme() {
        assert!(over_provisioning("pagemap", 0.0).is_ok());
        assert!(over_provisioning("pagemap", 0.999_999_999).is_ok());
        for bad in [1.0, -0.1, f64::NAN] {
            let FtlError::Config(c) = over_provisioning("pagemap", bad).unwrap_err() else { panic!() };
            assert_eq!(c.key, "ftl.over_provisioning");
            assert_eq!(c.problem, format!("pagemap.over_provisioning must be in [0, 1), got {bad}"));
        }
        assert!(gc_free_blocks("ssc", 1, GC_NEEDS_A_FREE_BLOCK).is_ok());
        let FtlError::Config(c) = gc_free_blocks("ssc", 0, GC_NEEDS_A_FREE_BLOCK).unwrap_err() else { panic!() };
        assert_eq!(c.key, "ftl.gc_free_blocks");
        assert_eq!(c.problem, "ssc.gc_free_blocks must be at least 1 (GC needs a free block to copy into)");
        let FtlError::Config(c) = gc_free_blocks("dftl", 0, "").unwrap_err() else { panic!() };
        assert_eq!(c.problem, "dftl.gc_free_blocks must be at least 1");
    }
}
