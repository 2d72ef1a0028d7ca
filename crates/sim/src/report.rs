//! A run's report assembled from the engine after its replay ([`report`]),
//! with the final read-back of every page, and the outcome of a run that
//! stopped ([`finish`]).

use crate::config::RunConfig;
use crate::energy;
use crate::engine::Engine;
use crate::error::SimError;
use crate::metrics::{self, Report};
use crate::setup::Prepared;
use crate::source::Requests;

/// The report of a run whose replay ended with `outcome`, and the run's outcome:
/// the final read-back of every page (data integrity) runs only after a replay
/// that succeeded, and its own error is the outcome then.
pub(crate) fn report(
    config: &RunConfig,
    p: &Prepared,
    engine: &mut Engine,
    requests: Option<&Requests>,
    outcome: Result<(), SimError>,
) -> (Report, Result<(), SimError>) {
    let seed = config.seed();
    let geometry = *engine.device.flash.nand().geometry();
    let logical_pages = engine.logical_pages();
    let end = engine.busy_until();
    let counters = *engine.device.flash.counters();
    let erase_count = metrics::EraseStats::of(&engine.device.flash);
    let (rber, retired_fraction) = metrics::RberStats::of(&engine.device.flash);
    let ram_bytes = engine.device.ftl.ram_bytes();
    let memory = metrics::MemoryReport::of(
        engine.device.ftl.memory(),
        engine.device.flash.nand().memory(),
        engine.model_bytes(),
        u64::from(geometry.total_pages()),
    );
    // The latency log is flushed whatever the outcome (an interrupted run's
    // log keeps the requests it measured); its own error comes after the
    // run's.
    let log = engine.latency_log.take().map_or(Ok(()), crate::latency_log::LatencyLog::finish);
    let outcome = outcome.and(log);
    // An interrupted run stops at once: no read-back of every page.
    let outcome = if engine.interrupted {
        outcome.and(Err(SimError::Interrupted { requests: engine.measured.requests }))
    } else {
        outcome.and_then(|()| engine.verify_all().map(drop))
    };
    let m = &engine.measured;
    let verdict = match m.first_mismatch {
        None => metrics::Integrity::Ok,
        Some(first) => metrics::Integrity::Failed { mismatches: m.mismatches, first },
    };
    let sim_seconds = if engine.measuring { end.saturating_sub(engine.measure_start) as f64 / 1e9 } else { 0.0 };
    let per_second = |x: f64| if sim_seconds > 0.0 { x / sim_seconds } else { 0.0 };
    let mut report = Report {
        ftl: config.ftl.kind.clone(),
        chip: config.device.chip.clone(),
        workload: if p.flows.is_empty() {
            p.source.describe()
        } else {
            p.flows.iter().map(|f| format!("{}: {}", f.name, f.source.describe())).collect::<Vec<_>>().join("; ")
        },
        seed,
        requests: m.requests,
        host_pages_read: m.pages_read,
        host_pages_written: m.pages_written,
        host_pages_trimmed: m.pages_trimmed,
        rmw_pages: m.rmw_pages,
        read_us: m.read.summary(),
        write_us: m.write.summary(),
        trim_us: m.trim.summary(),
        latency: metrics::LatencyDistributions {
            read: m.read.distribution(),
            write: m.write.distribution(),
            trim: m.trim.distribution(),
        },
        erase_count,
        rber,
        retired_fraction,
        rber_cdf: metrics::rber_cdf(&engine.device.flash),
        erase_histogram: metrics::erase_histogram(&engine.device.flash),
        stopped_at_retired_fraction: engine.stopped_at_retired_fraction,
        // Logical pages of a sub-page unit fill a fraction of a flash page
        // (factor 1 for flash-page units, so those figures are unchanged).
        space_utilization: logical_pages as f64
            / (f64::from(geometry.total_pages()) * (u64::from(geometry.page_size) / engine.unit_bytes()) as f64),
        logical_pages,
        physical_pages: u64::from(geometry.total_pages()),
        ram_bytes,
        memory,
        ftl_bound_us: ftlab_ftl::service_bound(&*engine.device.ftl).map(|b| b.0 as f64 / 1e3),
        bound_us: engine.bound_ns().map(|b| b as f64 / 1e3),
        bound_violations: engine.bound_ns().map(|_| m.bound_violations),
        max_service_us: m.max_service_ns as f64 / 1e3,
        rmw_bound_us: engine.bound_ns().map(|b| b.saturating_mul(2) as f64 / 1e3),
        rmw_bound_violations: engine.bound_ns().map(|_| m.rmw_bound_violations),
        max_rmw_service_us: m.max_rmw_service_ns as f64 / 1e3,
        max_read_block_us: m.max_read_block_ns.map(|ns| ns as f64 / 1e3),
        deadline_misses: m.tasks.iter().map(|t| t.deadline_misses).sum(),
        tasks: m.tasks.clone(),
        sim_seconds,
        iops: per_second(m.requests as f64),
        read_mb_per_s: per_second(m.bytes_read as f64 / 1e6),
        write_mb_per_s: per_second(m.bytes_written as f64 / 1e6),
        throughput: {
            let mut s = m.throughput.series_at_end(&counters);
            s.fill_die_idle(geometry.dies());
            s
        },
        energy: config.device.energy.map(|e| e.report(&counters, m.pages_read, m.pages_written)),
        die_time: energy::DieTimeReport::of(
            &counters,
            geometry.dies(),
            if engine.measuring { end.saturating_sub(engine.measure_start) } else { 0 },
            m.requests,
        ),
        ftl_gauges: m.throughput.final_gauges(),
        ftl_curves: engine.device.ftl.curves().into_iter().map(|(n, c)| (n.to_owned(), c)).collect(),
        integrity: verdict.to_string(),
        verdict,
        integrity_errors: m.mismatches,
        expired_reads: m.expired_reads,
        late_requests: requests.map_or(0, |r| r.late),
        unsupported: config.unsupported.clone(),
        ..Report::default()
    };
    report.set_flash(&counters);
    if let Some((skipped, address)) = requests.and_then(Requests::trace_info) {
        report.skipped_lines = skipped;
        report.address = Some(address);
    }
    (report, outcome)
}

/// `report`, or the error that stopped the run carrying the report (its `error`
/// set).
pub(crate) fn finish(mut report: Report, outcome: Result<(), SimError>) -> Result<Report, SimError> {
    match outcome {
        Ok(()) => Ok(report),
        Err(error) => {
            report.error = Some(error.to_string());
            if matches!(error, SimError::Interrupted { .. }) && report.integrity == "ok" {
                report.integrity = "not checked: the run was interrupted".into();
            }
            Err(SimError::Stopped { error: Box::new(error), report: Box::new(report) })
        }
    }
}
