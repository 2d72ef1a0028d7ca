//! Reproducing Janus-FTL's figures (004): where the phases of a phased
//! workload end (Figure 8: fused blocks over PostMark runs of different file
//! set sizes) and the utilization of the page-mapping area's garbage-collection
//! victims measured from a run's gauges (Figure 5).

use ftlab_sim::config::RunConfig;
use ftlab_sim::{Report, Simulation};
use ftlab_workload::GeneratorSpec;

use crate::LabError;

/// Requests each phase of `config`'s `workload.generator` (kind `phases`)
/// issues on its device, in order.
pub fn phase_requests(config: &RunConfig) -> Result<Vec<u64>, LabError> {
    let Some(GeneratorSpec::Phases { phases }) = &config.workload.generator else {
        return Err(LabError::config(
            "workload.generator",
            "workload.generator: the phases of a run are those of a generator of kind = \"phases\"; \
             this run has none",
        ));
    };
    let sim = Simulation::new(config)?;
    let (pages, page_size) = (sim.logical_pages(), sim.page_size());
    let seed = config.seed();
    phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let stream = p.build(pages, page_size, seed.wrapping_add(i as u64)).map_err(|e| {
                LabError::config(
                    format!("workload.generator.phases[{i}]"),
                    format!("workload.generator.phases[{i}]: {e}"),
                )
            })?;
            Ok(stream.count() as u64)
        })
        .collect()
}

/// The reports of `config`'s run stopped at the end of each phase of its
/// phased generator ([`phase_requests`]; runs are deterministic, so each is
/// the full run's prefix): `sim_seconds` is when the phase ended in the full
/// run's time series, `ftl_gauges` the FTL's state then. The last is the full
/// run.
pub fn phase_reports(config: &RunConfig) -> Result<Vec<Report>, LabError> {
    if config.workload.max_requests.is_some() {
        return Err(LabError::config(
            "workload.max_requests",
            "workload.max_requests: the phases end where their generators end; leave max_requests out",
        ));
    }
    let mut end = 0;
    let mut reports = Vec::new();
    for n in phase_requests(config)? {
        end += n;
        let mut c = config.clone();
        c.workload.max_requests = Some(end);
        reports.push(ftlab_sim::run(&c, &mut |_| {})?);
    }
    Ok(reports)
}

/// The mean utilization `u` (valid pages / pages per block) of the blocks the
/// FTL's garbage collection chose as victims, from the gauges `gc_victims` and
/// `gc_victim_valid_pages` of `report`'s time series (Janus-FTL has them),
/// over the intervals from fraction `from` of the run (0: all of it) to its
/// end; `None` without those gauges or without a victim in that part.
pub fn victim_utilization(report: &Report, pages_per_block: u32, from: f64) -> Option<f64> {
    let g = &report.throughput.gauges;
    let (victims, valid) = (g.get("gc_victims")?, g.get("gc_victim_valid_pages")?);
    let last = victims.len().checked_sub(1)?;
    let first = ((last as f64 * from.clamp(0.0, 1.0)) as usize).min(last);
    let (v0, p0) = if from <= 0.0 { (0.0, 0.0) } else { (victims[first], valid[first]) };
    let n = victims[last] - v0;
    (n > 0.0).then(|| (valid[last] - p0) / (n * f64::from(pages_per_block)))
}

/// One point of Figure 5, measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VictimPoint {
    /// The PMA utilization `u_d` set (`ftl.utilization` of `janus-fix`).
    pub u_d: f64,
    /// The fused blocks at the end, and the PMA utilization they give.
    pub fused_blocks: f64,
    pub u_d_measured: f64,
    /// The hot region (`workload.generator.space_fraction`) the run used: the
    /// target number of fused blocks' share of the logical space.
    pub hot_fraction: f64,
    /// The victims' mean utilization over the run's second half
    /// ([`victim_utilization`]), and `u` from Eq. 5 at `u_d`.
    pub u: f64,
    pub u_eq5: f64,
    /// Victims chosen over the whole run.
    pub victims: f64,
}

/// Runs `base` (a run configuration as a table: `janus-fix` under a
/// `hotcold` generator) at PMA utilization `u_d`: `ftl.utilization = u_d`,
/// and the hot region set to the target number of fused blocks, so that the
/// writes go uniformly over exactly the fused blocks and the PMA holds `N_F`
/// blocks of data in `N_O + N_F` blocks, as Eq. 5 assumes. `origin` names
/// `base` in errors.
pub fn victim_point(base: &toml::Table, origin: &str, u_d: f64) -> Result<VictimPoint, LabError> {
    use crate::overlay::{set_path, to_config};
    use toml::Value;
    let mut t = base.clone();
    set_path(&mut t, "ftl.utilization", Value::Float(u_d))?;
    // The target janus-fix keeps, from a run of one request.
    let mut probe = t.clone();
    set_path(&mut probe, "precondition.fill", Value::Boolean(false))?;
    set_path(&mut probe, "workload.max_requests", Value::Integer(1))?;
    let probe = to_config(probe, origin)?;
    let p = ftlab_sim::run(&probe, &mut |_| {})?;
    let ppb = probe.device.nand_config(probe.seed())?.geometry.pages_per_block;
    let Some(&target) = p.ftl_gauges.get("target_fused_blocks") else {
        return Err(LabError::config(
            "ftl.kind",
            format!("{origin}: ftl.kind: the FTL has no target_fused_blocks gauge"),
        ));
    };
    let hot_fraction = target * f64::from(ppb) / p.logical_pages as f64;
    if !(hot_fraction > 0.0 && hot_fraction < 1.0) {
        return Err(LabError::config(
            "ftl.utilization",
            format!(
            "{origin}: ftl.utilization = {u_d}: the target of {target} fused blocks is not a part of the logical space"
        ),
        ));
    }
    set_path(&mut t, "workload.generator.space_fraction", Value::Float(hot_fraction))?;
    let r = ftlab_sim::run(&to_config(t, origin)?, &mut |_| {})?;
    let Some(u) = victim_utilization(&r, ppb, 0.5) else {
        return Err(LabError::config(
            "ftl.utilization",
            format!(
                "{origin}: ftl.utilization = {u_d}: no garbage-collection victim in the run's second half; \
             give more requests"
            ),
        ));
    };
    let g = |n: &str| r.ftl_gauges.get(n).copied().unwrap_or(f64::NAN);
    Ok(VictimPoint {
        u_d,
        fused_blocks: g("fused_blocks"),
        u_d_measured: g("pma_utilization"),
        hot_fraction,
        u,
        u_eq5: ftlab_bounds::janus::victim_utilization(u_d),
        victims: g("gc_victims"),
    })
}
