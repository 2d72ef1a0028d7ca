//! The design-time figures of a chip, as `ftlab bounds` and `ftlab admit` give
//! them and the Python package returns them: the papers' bounds
//! ([`ftlab_bounds::all_schemes`]), what each real-time FTL promises as a run
//! builds it ([`as_run`]), and the device and channel wait Telomere's admission
//! tests take from a chip preset ([`admit_device`], [`channel_wait_ns`]).

use serde::Serialize;

use ftlab_bounds::telomere::Device;
use ftlab_bounds::ChipParams;
use ftlab_nand::presets::{self, ChipPreset};
use ftlab_sim::{RunConfig, Simulation};

use crate::LabError;

/// The real-time FTLs whose bound `ftlab bounds` shows as a run builds them:
/// the registry's schemes marked `bounds`, in its order.
pub fn run_schemes() -> Vec<&'static str> {
    ftlab_ftl::registry::schemes().into_iter().filter(|s| s.bounds).map(|s| s.name).collect()
}

/// Devices larger than this many pages are not built to read their FTLs' bounds
/// (the medium's tables would take gigabytes).
const MAX_BUILT_PAGES: u64 = 1 << 25;

/// One real-time FTL as a run builds it on the chip's default device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AsRun {
    /// The FTL (`ftl.kind`).
    pub ftl: &'static str,
    /// The bound a run checks, µs (channel transfers included).
    pub bound_us: Option<f64>,
    /// Logical pages exported / physical pages.
    pub space_utilization: f64,
}

/// The paper's figures and, for a named chip, what the FTLs run with: the JSON
/// of `ftlab bounds --format json`.
#[derive(Debug, Clone, Serialize)]
pub struct ChipBounds {
    /// Every scheme's bounds (001 Table III, 002 Table V).
    #[serde(flatten)]
    pub paper: ftlab_bounds::Bounds,
    /// Absent with explicit timing or a device too large to build.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_run: Option<Vec<AsRun>>,
}

/// The chip preset `name`, or an error listing the known ones.
pub fn chip(name: &str) -> Result<&'static ChipPreset, LabError> {
    presets::preset(name).ok_or_else(|| {
        LabError::config(
            "chip",
            format!("unknown chip `{name}`; known chips: {}", presets::names().collect::<Vec<_>>().join(", ")),
        )
    })
}

/// The bounds of chip preset `name` and of its FTLs as run (`with_transfer`:
/// the papers' figures with the channel transfer added to each page operation).
pub fn chip_bounds(name: &str, with_transfer: bool) -> Result<ChipBounds, LabError> {
    let p = chip(name)?;
    let bad = |e: ftlab_bounds::BoundsError| LabError::config("chip", format!("chip `{name}`: {e}"));
    let params = if with_transfer { ChipParams::from_preset_with_transfer(p) } else { ChipParams::from_preset(p) }
        .map_err(bad)?;
    let paper = ftlab_bounds::all_schemes(&params)
        .map_err(|e| LabError::config("chip", format!("no bounds for this chip: {e}")))?;
    Ok(ChipBounds { paper, as_run: as_run(name)? })
}

/// Builds each real-time FTL on chip `name`'s default device, as `ftlab run`
/// would; `None` for a device too large to build. A scheme that cannot run on
/// this chip is left out.
pub fn as_run(name: &str) -> Result<Option<Vec<AsRun>>, LabError> {
    let mut out = Vec::new();
    for ftl in run_schemes() {
        let text = format!("[device]\nchip = {name:?}\n[ftl]\nkind = {ftl:?}\n");
        let config = RunConfig::from_toml(&text, "bounds").map_err(|e| LabError::config("chip", e.to_string()))?;
        let pages = u64::from(
            config.device.nand_config(1).map_err(|e| LabError::config("chip", e.to_string()))?.geometry.total_pages(),
        );
        if pages > MAX_BUILT_PAGES {
            return Ok(None);
        }
        let Ok(sim) = Simulation::new(&config) else { continue };
        out.push(AsRun {
            ftl,
            bound_us: sim.ftl_bound().map(|b| b.0 as f64 / 1e3),
            space_utilization: sim.logical_pages() as f64 / sim.physical_pages() as f64,
        });
    }
    Ok(Some(out))
}

/// The device Telomere's admission tests see on chip preset `name`: its pages
/// per block, total blocks and chips, with `blocks` and `over_provisioning`
/// (lambda = 1 - F) overriding them.
pub fn admit_device(name: &str, blocks: Option<u64>, over_provisioning: Option<f64>) -> Result<Device, LabError> {
    let bad = |key: &'static str| move |e: ftlab_bounds::telomere::TelomereError| LabError::config(key, e.to_string());
    let mut d = Device::from_preset(chip(name)?);
    if let Some(blocks) = blocks {
        d = d.with_blocks(blocks).map_err(bad("blocks"))?;
    }
    if let Some(op) = over_provisioning {
        d = d.with_over_provisioning(op).map_err(bad("over_provisioning"))?;
    }
    Ok(d)
}

/// The transfers of the other dies on a die's channel of chip preset `name`, ns:
/// the channel wait of the per-chip admission test (0 for an unknown chip).
pub fn channel_wait_ns(name: &str) -> u64 {
    presets::preset(name).map_or(0, |p| {
        let g = p.geometry;
        u64::from(g.ways_per_channel * g.dies_per_way).saturating_sub(1) * p.timing.transfer(g.page_size + g.oob_size).0
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_small_chip_has_paper_bounds_and_run_bounds() {
        let b = chip_bounds("small-slc", false).unwrap();
        let rows = b.as_run.unwrap();
        assert!(rows.iter().any(|r| r.ftl == "gftl" && r.bound_us.is_some_and(|us| us > 0.0)), "{rows:?}");
        assert!(b.paper.gftl.max_read_us > 0.0);
    }

    #[test]
    fn an_unknown_chip_lists_the_known_ones() {
        let e = chip_bounds("nosuch", false).unwrap_err().to_string();
        assert!(e.contains("nosuch") && e.contains("small-slc"), "{e}");
        assert!(admit_device("nosuch", None, None).is_err());
        assert_eq!(channel_wait_ns("nosuch"), 0);
    }
}
