//! [`Device`]: the SSD a Telomere task set is admitted on (Table 1 of 000).

use ftlab_nand::presets::ChipPreset;
use serde::Serialize;

use super::error::TelomereError;

/// Longest time accepted anywhere in a task set, in nanoseconds (about 11.6 days).
pub(crate) const MAX_TIME_NS: u64 = 1_000_000_000_000_000;

/// The device side of Telomere's admission tests, by the symbols of Table 1 of
/// `000_ffe2fafb22bcad8e.txt`. Times are array times in whole nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Device {
    /// Where it came from (a preset name, or `explicit`).
    pub name: String,
    /// `P`, pages per block.
    pub pages_per_block: u32,
    /// `S_blocks`, physical blocks of the whole SSD.
    pub blocks: u64,
    /// `S_chips`, flash chips that work in parallel (channels x chips per channel).
    pub parallel_units: u32,
    /// Data bytes per page (the generator turns bandwidths into pages with it).
    pub page_size: u32,
    /// `t_r`, page read time.
    pub t_r_ns: u64,
    /// `t_w`, page program time.
    pub t_w_ns: u64,
    /// `t_e`, block erase time.
    pub t_e_ns: u64,
    /// `lambda`, device utilization (logical over physical space) = 1 - over-provisioning.
    /// Default 1: every physical block may hold task data.
    pub lambda: f64,
    /// `B^R_max` of the whole device in MB/s (10^6 bytes; scale by 1.048576 for
    /// the paper's binary megabytes): only the generator (Eq. 21) uses it.
    pub read_bandwidth_mb_s: f64,
    /// `B^W_max` of the whole device in MB/s: only the generator (Eq. 22) uses it.
    pub write_bandwidth_mb_s: f64,
    /// How Eq. 19's garbage-collection job is read ([`GcJobReading`]); ftlab's
    /// generalized reading by default.
    pub gc_job: GcJobReading,
}

/// Two readings of Eq. 19 of `000_ffe2fafb22bcad8e.txt`, the garbage-collection
/// job of a task (see [`super::gc_job`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcJobReading {
    /// ftlab's: a stripe of `g` blocks is erased on `min(g, S_chips)` chips at
    /// once, `C_i^g = ceil(g / S_chips) t_e`, once per stripe written, every
    /// `T_i^w floor(g P / w_i)` (or `T_i^w / ceil(w_i / (g P))`), as Eq. 7
    /// generalizes the space to `g`-block stripes.
    #[default]
    Generalized,
    /// As printed: `C_i^g = ceil(t_e / S_chips)` with times in milliseconds (the
    /// unit of the paper's worked example; 2.7 ms over 64 chips is 1 ms), every
    /// `T_i^w floor(P / w_i)` (or `T_i^w / ceil(w_i / P)`): a collection per
    /// block's worth of pages written whatever the granularity, `g` times as
    /// many as the generalized reading, each costing a whole millisecond. The
    /// paper's Figure 9 (Telomere schedulable up to 83% throughput) comes out
    /// at 82% with this reading and the bandwidths in binary megabytes
    /// (`ftlab schedulability --bandwidth-unit mib`; 86% in decimal ones),
    /// against 112% (118%) with the generalized one.
    Printed,
}

impl GcJobReading {
    /// `generalized` or `printed`.
    pub fn name(self) -> &'static str {
        match self {
            GcJobReading::Generalized => "generalized",
            GcJobReading::Printed => "printed",
        }
    }
}

/// Device-wide read and write bandwidths from the figures the paper prints for a
/// preset (Section 6.1.1 of 000).
///
/// **Interpreted.** Section 6.1.1 gives 100 MB/s read, 41.4 MB/s write and 1.4 GB/s
/// erase bandwidth for the 64-chip SSD. These are one chip's: a chip erases a
/// 128 x 32 KiB block in 2.7 ms (1.55 GB/s) and programs a 32 KiB page in 0.7 ms
/// (46.8 MB/s). Since "data is striped across all flash chips" (Section 6.1.2), the
/// generator's `B_max` is the device's, 64 times these. Read as device-wide figures
/// instead, the generated sets would load the device to at most 1% at `U^b = 1`, and
/// no policy could ever be refused on throughput; read per chip, WAO-GC's Eq. 25
/// refuses from about 0.4 throughput utilization, as Section 6.1.5 reports (38%).
fn paper_bandwidths(name: &str) -> Option<(f64, f64)> {
    const CHIPS: f64 = 64.0;
    match name {
        "telomere-1tb-ssd" => Some((100.0 * CHIPS, 41.4 * CHIPS)),
        _ => None,
    }
}

impl Device {
    /// From a chip preset: its pages per block, total blocks, dies (channels x ways x
    /// dies per way) as parallel units, array times, and `lambda` = 1.
    ///
    /// Bandwidths (generator only): the paper's 100 MB/s read and 41.4 MB/s write per
    /// chip, times 64 chips, for `telomere-1tb-ssd`; for any other preset, what the chips and channels can carry
    /// (`min(channels x channel rate, units x page / t)`), since the paper gives none.
    pub fn from_preset(preset: &ChipPreset) -> Self {
        let g = &preset.geometry;
        let t = &preset.timing;
        let units = g.dies();
        let bus = f64::from(g.channels) * f64::from(t.channel_mb_per_s);
        // bytes per ns = 10^3 MB/s.
        let chips = |ns: u64| f64::from(units) * f64::from(g.page_size) / ns.max(1) as f64 * 1_000.0;
        let (read, write) =
            paper_bandwidths(preset.name).unwrap_or((bus.min(chips(t.read_ns)), bus.min(chips(t.program_ns))));
        Device {
            name: preset.name.to_owned(),
            pages_per_block: g.pages_per_block,
            blocks: u64::from(g.total_blocks()),
            parallel_units: units,
            page_size: g.page_size,
            t_r_ns: t.read_ns,
            t_w_ns: t.program_ns,
            t_e_ns: t.erase_ns,
            lambda: 1.0,
            read_bandwidth_mb_s: read,
            write_bandwidth_mb_s: write,
            gc_job: GcJobReading::Generalized,
        }
    }

    /// The same device with `blocks` physical blocks in all.
    pub fn with_blocks(mut self, blocks: u64) -> Result<Self, TelomereError> {
        self.blocks = blocks;
        self.validate()?;
        Ok(self)
    }

    /// The same device with `blocks_per_unit` blocks on each parallel unit (Section 6.3
    /// of 000 runs the Cosmos board with 21 blocks per chip).
    pub fn with_blocks_per_unit(self, blocks_per_unit: u64) -> Result<Self, TelomereError> {
        let total = blocks_per_unit.saturating_mul(u64::from(self.parallel_units));
        self.with_blocks(total)
    }

    /// The same device with `alpha` of its physical space hidden from the tasks:
    /// `lambda = 1 - alpha` (Section 6.1.5 of 000 reserves alpha of the physical
    /// space for wear leveling). `alpha` must be in `[0, 1)`.
    pub fn with_over_provisioning(mut self, alpha: f64) -> Result<Self, TelomereError> {
        if !(0.0..1.0).contains(&alpha) {
            return Err(self.err("over_provisioning", format!("is {alpha}: give a fraction in [0, 1), e.g. 0.1")));
        }
        self.lambda = 1.0 - alpha;
        Ok(self)
    }

    /// The device with Eq. 19 read as `reading`.
    pub fn with_gc_job(mut self, reading: GcJobReading) -> Self {
        self.gc_job = reading;
        self
    }

    /// `alpha = 1 - lambda`.
    pub fn over_provisioning(&self) -> f64 {
        1.0 - self.lambda
    }

    /// `S_pages = S_blocks x P`.
    pub fn pages(&self) -> u64 {
        self.blocks.saturating_mul(u64::from(self.pages_per_block))
    }

    fn err(&self, field: &'static str, reason: String) -> TelomereError {
        TelomereError::InvalidDevice { device: self.name.clone(), field, reason }
    }

    /// Checks every parameter is usable.
    pub fn validate(&self) -> Result<(), TelomereError> {
        if self.pages_per_block == 0 {
            return Err(self.err("pages_per_block", "is 0: give the chip's pages per block".into()));
        }
        if self.blocks == 0 {
            return Err(self.err("blocks", "is 0: give the number of physical blocks".into()));
        }
        if self.parallel_units == 0 {
            return Err(self.err("parallel_units", "is 0: give channels x chips per channel".into()));
        }
        for (field, ns) in [("t_r", self.t_r_ns), ("t_w", self.t_w_ns), ("t_e", self.t_e_ns)] {
            if ns == 0 || ns > MAX_TIME_NS {
                return Err(self.err(field, format!("is {ns} ns: give a positive data-sheet time")));
            }
        }
        if !(self.lambda > 0.0 && self.lambda <= 1.0) {
            return Err(self.err("lambda", format!("is {}: give a ratio in (0, 1]", self.lambda)));
        }
        for (field, b) in
            [("read_bandwidth_mb_s", self.read_bandwidth_mb_s), ("write_bandwidth_mb_s", self.write_bandwidth_mb_s)]
        {
            if !(b.is_finite() && b > 0.0) {
                return Err(self.err(field, format!("is {b}: give a positive bandwidth")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftlab_nand::presets::preset;

    #[test]
    fn the_1tb_ssd_of_section_6_1_1() {
        let d = Device::from_preset(preset("telomere-1tb-ssd").unwrap());
        assert_eq!((d.pages_per_block, d.blocks, d.parallel_units), (128, 16 * 4 * 4096, 64));
        assert_eq!((d.t_r_ns, d.t_w_ns, d.t_e_ns), (200_000, 700_000, 2_700_000));
        assert_eq!((d.read_bandwidth_mb_s, d.write_bandwidth_mb_s), (6400.0, 41.4 * 64.0));
        assert_eq!(d.pages(), 33_554_432);
    }

    #[test]
    fn overrides_are_checked() {
        let d = Device::from_preset(preset("cosmos-openssd").unwrap());
        let d = d.with_blocks_per_unit(21).unwrap().with_over_provisioning(0.1).unwrap();
        assert_eq!(d.blocks, 336);
        assert!((d.lambda - 0.9).abs() < 1e-12);
        let e = d.clone().with_over_provisioning(1.0).unwrap_err();
        assert!(e.to_string().contains("over_provisioning is 1"), "{e}");
        let e = d.with_blocks(0).unwrap_err();
        assert_eq!(e.to_string(), "device `cosmos-openssd`: blocks is 0: give the number of physical blocks");
    }
}
