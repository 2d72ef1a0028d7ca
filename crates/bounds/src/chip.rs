//! [`ChipParams`]: the flash specification every bound is computed from.

use ftlab_nand::presets::ChipPreset;
use serde::Serialize;

use crate::error::BoundsError;

/// Fewest pages per block any scheme accepts: a victim block must be able to hold
/// one invalid page besides its valid ones (Lemma 4.1 of 001).
pub const MIN_PAGES_PER_BLOCK: u32 = 2;

/// The most pages per block a chip may have: as many as ftlab's medium accepts
/// (65,536).
pub const MAX_PAGES_PER_BLOCK: u32 = 1 << 16;

/// Longest time accepted, in nanoseconds (about 11.6 days): far beyond any flash
/// operation, and small enough that sums of a few thousand of them fit in `u64`.
const MAX_TIME_NS: u64 = 1_000_000_000_000_000;

/// The flash specification the papers' bounds are written in, by their symbols
/// (Table I of 001, Table II of 002).
///
/// **Times are array times only**: the data-sheet typical values the papers print
/// (Table II of 001, Table I of 002), with no channel transfer. That is what makes the
/// papers' own tables come out (e.g. GFTL's 425 us read bound is exactly
/// `16 * t_rdoob + t_rdpg` of its Table I chip). ftlab's simulator adds a transfer on
/// top of every array time; [`ChipParams::from_preset_with_transfer`] builds the
/// matching parameters when a bound is to be compared with a simulated worst case.
///
/// Times are held in whole nanoseconds so that the floors and ceilings of the
/// papers' step counts are exact; they are reported in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "ChipParamsReport")]
pub struct ChipParams {
    /// `t_rdpg` (001; GFTL: `T_rdpg`; 001 Eq. 5-7 write `t_rd`): read one page from the
    /// array.
    t_rdpg_ns: u64,
    /// `t_wrpg` (001; GFTL: `T_wrpg`, a page and its OOB; 001 Eq. 5-7 write `t_wr`):
    /// program one page.
    t_wrpg_ns: u64,
    /// `t_rdoob` (GFTL: `T_rdoob`): read one page's out-of-band (spare) area.
    t_rdoob_ns: u64,
    /// `t_er` (GFTL: `T_er`): erase one block, the longest atomic operation.
    t_er_ns: u64,
    /// `pi`: pages per block.
    pages_per_block: u32,
    /// Data bytes per page, when known (on-demand mapping: translation entries per page).
    page_size: Option<u32>,
    /// `N`: physical blocks of the device, when known (GFTL's write-queue length).
    blocks: Option<u64>,
}

/// How [`ChipParams`] serializes: the papers' symbols, in microseconds.
#[derive(Debug, Clone, Copy, Serialize)]
struct ChipParamsReport {
    t_rdpg_us: f64,
    t_wrpg_us: f64,
    t_rdoob_us: f64,
    t_er_us: f64,
    pages_per_block: u32,
    page_size: Option<u32>,
    blocks: Option<u64>,
}

impl From<ChipParams> for ChipParamsReport {
    fn from(c: ChipParams) -> Self {
        ChipParamsReport {
            t_rdpg_us: c.t_rdpg_us(),
            t_wrpg_us: c.t_wrpg_us(),
            t_rdoob_us: c.t_rdoob_us(),
            t_er_us: c.t_er_us(),
            pages_per_block: c.pages_per_block,
            page_size: c.page_size,
            blocks: c.blocks,
        }
    }
}

/// Nanoseconds to microseconds.
pub(crate) fn us(ns: u64) -> f64 {
    ns as f64 / 1_000.0
}

/// A page or step count as `u32`. Counts here are bounded by a few times pi (every
/// page operation fits in `t_er`, which the schemes check), so saturation never bites.
pub(crate) fn to_u32(x: u64) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

fn check_ns(name: &'static str, ns: u64, must_be_positive: bool) -> Result<u64, BoundsError> {
    if ns > MAX_TIME_NS || (must_be_positive && ns == 0) {
        return Err(BoundsError::InvalidTime { name, value_us: us(ns), must_be_positive });
    }
    Ok(ns)
}

fn us_to_ns(name: &'static str, value_us: f64, must_be_positive: bool) -> Result<u64, BoundsError> {
    let ns = value_us * 1_000.0;
    if !ns.is_finite() || ns < 0.0 || ns > MAX_TIME_NS as f64 {
        return Err(BoundsError::InvalidTime { name, value_us, must_be_positive });
    }
    // Rounded to whole nanoseconds: data sheets give at most 0.1 us resolution.
    check_ns(name, ns.round() as u64, must_be_positive).map_err(|_| BoundsError::InvalidTime {
        name,
        value_us,
        must_be_positive,
    })
}

impl ChipParams {
    /// From explicit values in microseconds: `t_rdpg`, `t_wrpg`, `t_rdoob`, `t_er`, `pi`.
    /// `t_rdoob` may be zero; the other times must be positive.
    pub fn new(
        t_rdpg_us: f64,
        t_wrpg_us: f64,
        t_rdoob_us: f64,
        t_er_us: f64,
        pages_per_block: u32,
    ) -> Result<Self, BoundsError> {
        Self::from_ns(
            us_to_ns("t_rdpg", t_rdpg_us, true)?,
            us_to_ns("t_wrpg", t_wrpg_us, true)?,
            us_to_ns("t_rdoob", t_rdoob_us, false)?,
            us_to_ns("t_er", t_er_us, true)?,
            pages_per_block,
        )
    }

    /// From explicit values in nanoseconds (see [`ChipParams::new`]).
    pub fn from_ns(
        t_rdpg_ns: u64,
        t_wrpg_ns: u64,
        t_rdoob_ns: u64,
        t_er_ns: u64,
        pages_per_block: u32,
    ) -> Result<Self, BoundsError> {
        let chip = ChipParams {
            t_rdpg_ns: check_ns("t_rdpg", t_rdpg_ns, true)?,
            t_wrpg_ns: check_ns("t_wrpg", t_wrpg_ns, true)?,
            t_rdoob_ns: check_ns("t_rdoob", t_rdoob_ns, false)?,
            t_er_ns: check_ns("t_er", t_er_ns, true)?,
            pages_per_block: 0,
            page_size: None,
            blocks: None,
        };
        chip.with_pages_per_block(pages_per_block)
    }

    /// From a named chip: its array times (no channel transfer, as in the papers'
    /// tables), its pages per block, page size and total blocks.
    pub fn from_preset(preset: &ChipPreset) -> Result<Self, BoundsError> {
        let t = &preset.timing;
        let g = &preset.geometry;
        let chip = Self::from_ns(t.read_ns, t.program_ns, t.read_oob_ns, t.erase_ns, g.pages_per_block)?
            .with_page_size(g.page_size)
            .with_blocks(u64::from(g.total_blocks()))?;
        Ok(chip)
    }

    /// Like [`ChipParams::from_preset`], but each page operation also pays the channel
    /// transfer ftlab's simulator charges: page plus OOB bytes for a page read or
    /// program, the OOB bytes for an OOB read. Use it to compare a bound with a
    /// simulated worst case; the papers' tables use [`ChipParams::from_preset`].
    pub fn from_preset_with_transfer(preset: &ChipPreset) -> Result<Self, BoundsError> {
        let t = &preset.timing;
        let g = &preset.geometry;
        let page = t.transfer(g.page_size.saturating_add(g.oob_size)).as_ns();
        let oob = t.transfer(g.oob_size).as_ns();
        let chip = Self::from_ns(
            t.read_ns.saturating_add(page),
            t.program_ns.saturating_add(page),
            t.read_oob_ns.saturating_add(oob),
            t.erase_ns,
            g.pages_per_block,
        )?
        .with_page_size(g.page_size)
        .with_blocks(u64::from(g.total_blocks()))?;
        Ok(chip)
    }

    /// The same chip with `pi` pages per block (GFTL's Table V varies pi on one chip).
    pub fn with_pages_per_block(mut self, pages_per_block: u32) -> Result<Self, BoundsError> {
        if pages_per_block < MIN_PAGES_PER_BLOCK {
            return Err(BoundsError::TooFewPages { pages_per_block, min: MIN_PAGES_PER_BLOCK });
        }
        if pages_per_block > MAX_PAGES_PER_BLOCK {
            return Err(BoundsError::TooManyPages { pages_per_block, max: MAX_PAGES_PER_BLOCK });
        }
        self.pages_per_block = pages_per_block;
        Ok(self)
    }

    /// The same chip with a known page size in bytes.
    pub fn with_page_size(mut self, page_size: u32) -> Self {
        self.page_size = Some(page_size).filter(|&b| b > 0);
        self
    }

    /// The same chip in a device of `blocks` physical blocks (`N`).
    pub fn with_blocks(mut self, blocks: u64) -> Result<Self, BoundsError> {
        if blocks == 0 {
            return Err(BoundsError::ZeroBlocks);
        }
        self.blocks = Some(blocks);
        Ok(self)
    }

    /// `t_rdpg` in microseconds.
    pub fn t_rdpg_us(&self) -> f64 {
        us(self.t_rdpg_ns)
    }
    /// `t_wrpg` in microseconds.
    pub fn t_wrpg_us(&self) -> f64 {
        us(self.t_wrpg_ns)
    }
    /// `t_rdoob` in microseconds.
    pub fn t_rdoob_us(&self) -> f64 {
        us(self.t_rdoob_ns)
    }
    /// `t_er` in microseconds.
    pub fn t_er_us(&self) -> f64 {
        us(self.t_er_ns)
    }
    /// `t_rdpg` in nanoseconds.
    pub fn t_rdpg_ns(&self) -> u64 {
        self.t_rdpg_ns
    }
    /// `t_wrpg` in nanoseconds.
    pub fn t_wrpg_ns(&self) -> u64 {
        self.t_wrpg_ns
    }
    /// `t_rdoob` in nanoseconds.
    pub fn t_rdoob_ns(&self) -> u64 {
        self.t_rdoob_ns
    }
    /// `t_er` in nanoseconds.
    pub fn t_er_ns(&self) -> u64 {
        self.t_er_ns
    }
    /// `pi`, pages per block (at least [`MIN_PAGES_PER_BLOCK`]).
    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }
    /// Data bytes per page, if known.
    pub fn page_size(&self) -> Option<u32> {
        self.page_size
    }
    /// `N`, the device's physical blocks, if known.
    pub fn blocks(&self) -> Option<u64> {
        self.blocks
    }
    /// `pi` as `u64`, for time sums.
    pub(crate) fn pi(&self) -> u64 {
        u64::from(self.pages_per_block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftlab_nand::presets::preset;

    #[test]
    fn preset_times_are_array_times() {
        let c = ChipParams::from_preset(preset("lazy-rtgc-eval-slc").unwrap()).unwrap();
        assert_eq!(c.t_wrpg_ns(), 220_900);
        assert_eq!(c.t_rdpg_us(), 29.0);
        assert_eq!(c.pages_per_block(), 64);
        assert_eq!(c.page_size(), Some(2048));
        assert_eq!(c.blocks(), Some(262_144));
    }

    #[test]
    fn transfer_variant_adds_the_bus_time() {
        let p = preset("spansion-slc-512mb").unwrap();
        let plain = ChipParams::from_preset(p).unwrap();
        let bus = ChipParams::from_preset_with_transfer(p).unwrap();
        // 2112 B at 40 MB/s = 52.8 us; 64 B = 1.6 us.
        assert_eq!(bus.t_rdpg_ns() - plain.t_rdpg_ns(), 52_800);
        assert_eq!(bus.t_wrpg_ns() - plain.t_wrpg_ns(), 52_800);
        assert_eq!(bus.t_rdoob_ns() - plain.t_rdoob_ns(), 1_600);
        assert_eq!(bus.t_er_ns(), plain.t_er_ns());
    }

    #[test]
    fn bad_inputs_are_refused_with_the_input_named() {
        let e = ChipParams::new(25.0, 200.0, 25.0, 2000.0, 0).unwrap_err();
        assert_eq!(e, BoundsError::TooFewPages { pages_per_block: 0, min: 2 });
        let big = ChipParams::new(25.0, 200.0, 25.0, 2000.0, 64).unwrap().with_pages_per_block(u32::MAX).unwrap_err();
        assert_eq!(big, BoundsError::TooManyPages { pages_per_block: u32::MAX, max: 65_536 });
        assert!(big.to_string().contains("at most 65536 pages"), "{big}");
        assert!(ChipParams::new(25.0, 200.0, 25.0, 2000.0, 65_537).is_err());
        assert!(ChipParams::new(25.0, 200.0, 25.0, 2000.0, 64).unwrap().with_pages_per_block(65_536).is_ok());
        assert!(e.to_string().contains("pages_per_block (pi) is 0"), "{e}");
        let e = ChipParams::new(25.0, f64::NAN, 25.0, 2000.0, 64).unwrap_err();
        assert!(e.to_string().starts_with("t_wrpg = NaN us"), "{e}");
        let e = ChipParams::new(25.0, 200.0, 25.0, 0.0, 64).unwrap_err();
        assert!(e.to_string().contains("t_er = 0 us") && e.to_string().contains("greater than zero"), "{e}");
        assert!(ChipParams::new(25.0, 200.0, -1.0, 2000.0, 64).is_err());
        assert!(ChipParams::new(25.0, 200.0, 0.0, 2000.0, 64).is_ok(), "t_rdoob may be 0");
        assert_eq!(
            ChipParams::new(25.0, 200.0, 25.0, 2000.0, 64).unwrap().with_blocks(0),
            Err(BoundsError::ZeroBlocks)
        );
    }

    #[test]
    fn serializes_in_microseconds_by_the_papers_symbols() {
        let c = ChipParams::new(29.0, 220.9, 29.0, 2000.0, 64).unwrap();
        let v = serde_json::to_value(c).unwrap();
        assert_eq!(v["t_wrpg_us"], 220.9);
        assert_eq!(v["t_er_us"], 2000.0);
        assert_eq!(v["pages_per_block"], 64);
        assert!(v["blocks"].is_null());
    }
}
