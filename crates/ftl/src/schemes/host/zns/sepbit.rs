//! SepBIT's classes for garbage collection's copies, for `zns-host`'s
//! `gc_placement = "sepbit"` (Wang et al., "Separating Data via Block
//! Invalidation Time Inference for Write Amplification Reduction in
//! Log-Structured Storage", FAST '22, the design section; and the
//! authors' artifact, `fallfish/sepbit`: `trace_replay/.../placement/
//! SepBIT.java` and `prototype/src/placement/sepbit.cc`, whose rules are
//! the ones followed here).
//!
//! SepBIT has six classes of open segments (here: zones). Classes 1 and 2
//! take user writes (1: the blocks whose inferred lifetime is below a
//! threshold ℓ; 2: the rest); classes 3 to 6 take garbage collection's
//! rewrites:
//!
//! - a block rewritten from a class-1 segment goes to class 3;
//! - any other rewritten block goes by its *age*, the time since its last
//!   user write: class 4 below 4ℓ, class 5 below 16ℓ, class 6 from 16ℓ.
//!
//! ℓ is the average lifetime of recently reclaimed class-1 segments, a
//! segment's lifetime being the time from its creation (opening) to its
//! reclaim. The time is the count of user-written blocks. The artifact
//! averages ℓ over batches of 16 reclaimed class-1 segments (ℓ changes
//! once every 16 such reclaims, to the mean of those 16) and starts it at
//! infinity: until 16 class-1 segments are reclaimed, every aged copy goes
//! to class 4.
//!
//! In ftlab (see [`super::log`] for which zone is class 1): the clock is
//! host pages written to the host FTL (each page of a host write counts
//! one, garbage collection's copies none); each logical page's last host
//! write is kept on that clock (host RAM, 8 bytes a logical page), and
//! each zone's opening (8 bytes a zone). ℓ is the mean lifetime of the
//! last complete batch of [`WINDOW`] reclaimed class-1 zones, as in the
//! artifact. Nothing of this is on the medium: after a power cut the clock,
//! the ages and ℓ restart (every page's age counts from the recovery, so
//! until pages age again the copies go to the young classes; ℓ is unknown
//! until [`WINDOW`] class-1 zones are reclaimed again).

/// Garbage collection's classes (SepBIT's 3, 4, 5 and 6), each a copy zone.
pub(super) const GC_CLASSES: u32 = 4;

/// Reclaimed class-1 zones a measurement of ℓ averages (the artifact's 16).
pub(super) const WINDOW: u32 = 16;

/// The clock, the pages' last host writes, the zones' openings and ℓ.
#[derive(Debug, Clone)]
pub(super) struct GcClasses {
    /// Host pages written so far.
    pub(super) clock: u64,
    /// Per logical page, the clock of its last host write.
    pub(super) last_write: Vec<u64>,
    /// Per zone, the clock when it was last opened.
    pub(super) opened: Vec<u64>,
    /// The lifetimes of the class-1 zones reclaimed in the current batch.
    pub(super) batch_sum: u64,
    pub(super) batch_len: u32,
    /// The sum of the last complete batch's lifetimes (ℓ x [`WINDOW`]);
    /// `None` (ℓ infinite) before the first.
    pub(super) window_sum: Option<u64>,
}

impl GcClasses {
    pub(super) fn new(logical: u32, zones: u32) -> Self {
        GcClasses {
            clock: 0,
            last_write: vec![0; logical as usize],
            opened: vec![0; zones as usize],
            batch_sum: 0,
            batch_len: 0,
            window_sum: None,
        }
    }

    /// A host write of logical page `lpn`: its last write is now, and the
    /// clock ticks.
    pub(super) fn host_write(&mut self, lpn: u32) {
        if let Some(t) = self.last_write.get_mut(lpn as usize) {
            *t = self.clock;
        }
        self.clock += 1;
    }

    /// Zone `zone` opened (taken from the free zones) now.
    pub(super) fn opened(&mut self, zone: u32) {
        if let Some(t) = self.opened.get_mut(zone as usize) {
            *t = self.clock;
        }
    }

    /// A class-1 zone reclaimed now: its lifetime joins the batch, and a
    /// full batch becomes ℓ.
    pub(super) fn reclaimed_class1(&mut self, zone: u32) {
        let opened = self.opened.get(zone as usize).copied().unwrap_or(self.clock);
        self.batch_sum = self.batch_sum.saturating_add(self.clock.saturating_sub(opened));
        self.batch_len += 1;
        if self.batch_len == WINDOW {
            self.window_sum = Some(self.batch_sum);
            self.batch_sum = 0;
            self.batch_len = 0;
        }
    }

    /// The class of a copy of `lpn`, 0 to 3 for SepBIT's 3 to 6: 0 if its
    /// victim was a class-1 zone, else by its age against ℓ (4ℓ, 16ℓ).
    pub(super) fn class(&self, from_class1: bool, lpn: u32) -> u32 {
        if from_class1 {
            return 0;
        }
        let Some(sum) = self.window_sum else { return 1 };
        let last = self.last_write.get(lpn as usize).copied().unwrap_or(0);
        let age = u128::from(self.clock.saturating_sub(last));
        // age < 4ℓ = 4 sum / WINDOW, and age < 16ℓ, in integers.
        let (sum, window) = (u128::from(sum), u128::from(WINDOW));
        if age * window < 4 * sum {
            1
        } else if age * window < 16 * sum {
            2
        } else {
            3
        }
    }

    /// ℓ in host pages, once measured.
    pub(super) fn threshold(&self) -> Option<f64> {
        self.window_sum.map(|s| s as f64 / f64::from(WINDOW))
    }

    /// Host RAM: the pages' last writes, the zones' openings, the counters.
    pub(super) fn ram_bytes(&self) -> u64 {
        (self.last_write.len() as u64 + self.opened.len() as u64) * 8 + 4 * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_go_by_origin_then_by_age_against_the_reclaimed_class1_lifetime() {
        let mut c = GcClasses::new(8, 4);
        // Before ℓ is measured, every aged copy goes to class 4.
        c.host_write(0);
        assert_eq!((c.class(true, 0), c.class(false, 0)), (0, 1));
        assert_eq!(c.threshold(), None);
        // Zone 1 opened at clock 1, reclaimed at clock 11: a lifetime of 10,
        // 16 times, so ℓ = 10.
        c.opened(1);
        for lpn in 1..11 {
            c.host_write(1 + lpn % 7);
        }
        for _ in 0..WINDOW - 1 {
            c.reclaimed_class1(1);
        }
        assert_eq!(c.threshold(), None, "ℓ changes once a batch is complete");
        c.reclaimed_class1(1);
        assert_eq!(c.threshold(), Some(10.0));
        // Page 0 was written at clock 0, now 11: age 11 < 40.
        assert_eq!(c.class(false, 0), 1);
        for lpn in 0..40 {
            c.host_write(1 + lpn % 7);
        }
        // Age 51: at least 4ℓ, below 16ℓ.
        assert_eq!(c.class(false, 0), 2);
        for lpn in 0..109 {
            c.host_write(1 + lpn % 7);
        }
        // Age 160 = 16ℓ.
        assert_eq!(c.class(false, 0), 3);
        assert_eq!(c.class(true, 0), 0, "from class 1: class 3, whatever the age");
        // Out of range: no panic.
        c.host_write(99);
        c.opened(99);
        let _ = c.class(false, 99);
    }
}
