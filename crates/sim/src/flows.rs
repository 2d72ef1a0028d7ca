//! Several host flows sharing one device (`[[flow]]` tables), each with its
//! own workload, queue depth, priority class and weight, and the slowdown of
//! each flow against the same flow run alone on the same device (the measure
//! of MQSim's multi-queue studies, Tavakkol et al., FAST '18, Section 5).
//!
//! ```toml
//! [host]
//! fetch_size = 16            # requests of all flows in the device at once
//!
//! [[flow]]
//! name = "reader"
//! queue_depth = 16
//! priority = "urgent"
//! [flow.workload.generator]
//! kind = "uniform"
//! read_fraction = 1.0
//! requests = 20000
//!
//! [[flow]]
//! name = "writer"
//! queue_depth = 2
//! [flow.workload.generator]
//! kind = "uniform"
//! requests = 20000
//! ```
//!
//! The logical space is split into equal contiguous parts, one a flow, in the
//! order of the tables (as MQSim does); each flow's addresses stay in its part.
//! A flow's run alone keeps its part, seed and everything else, so the only
//! difference is the other flows. Slowdown = the flow's mean response time
//! shared / alone; fairness = the smallest slowdown / the largest.

use crate::config::{LoopMode, Priority, RunConfig, Source, WorkloadSpec};
use crate::engine::{Engine, Fetch, FlowInput, FlowStats, Progress};
use crate::error::SimError;
use crate::metrics::{FlowReport, Report};
use crate::source::{Request, Requests, TaskSpace};

/// One flow, validated.
#[derive(Debug, Clone)]
pub struct Flow {
    pub(crate) name: String,
    pub(crate) source: Source,
    pub(crate) queue_depth: u32,
    pub(crate) closed: bool,
    pub(crate) priority: Priority,
    pub(crate) weight: u32,
    pub(crate) seed: u64,
    pub(crate) stop_ns: Option<u64>,
    pub(crate) max_requests: Option<u64>,
    pub(crate) time_scale: f64,
    pub(crate) working_set: f64,
    pub(crate) request_bytes: Option<u32>,
    pub(crate) stream: Option<u32>,
    pub(crate) placement: Option<crate::placement::PlacementSpec>,
}

/// The validated flows of `config` (empty: a single-source run).
pub(crate) fn flows(config: &RunConfig) -> Result<Vec<Flow>, SimError> {
    if config.flows.is_empty() {
        return Ok(Vec::new());
    }
    if config.workload != WorkloadSpec::default() {
        return Err(SimError::config(
            "workload",
            "[workload] and [[flow]] both given: a run has one workload or several flows; move [workload] into a \
             [[flow]] table",
        ));
    }
    if config.flows.len() > 64 {
        return Err(SimError::config(
            "flow",
            format!("{} [[flow]] tables: at most 64 flows share a device", config.flows.len()),
        ));
    }
    config
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let key = format!("flow[{i}]");
            let name = f.name.clone().unwrap_or_else(|| format!("flow-{}", i + 1));
            let source = f.workload.source().map_err(|e| within(&key, &name, e))?;
            if matches!(source, Source::Tasks { .. }) {
                return Err(SimError::config(
                    format!("{key}.workload.task"),
                    format!("flow `{name}`: periodic tasks cannot be a flow; give a trace or a generator"),
                ));
            }
            let host = config.host.resolve(&source)?;
            let closed = match f.mode {
                Some(m) => m == LoopMode::Closed,
                None => host.closed,
            };
            let queue_depth = f.queue_depth.unwrap_or(32);
            if queue_depth == 0 {
                return Err(SimError::config(
                    format!("{key}.queue_depth"),
                    format!("flow `{name}`: queue_depth must be at least 1"),
                ));
            }
            if f.weight == Some(0) {
                return Err(SimError::config(
                    format!("{key}.weight"),
                    format!("flow `{name}`: weight must be at least 1"),
                ));
            }
            let stop_ns = match f.stop_ms {
                None => None,
                Some(ms) if ms > 0.0 && ms * 1e6 < ftlab_nand::SimTime::LATEST.0 as f64 => Some((ms * 1e6) as u64),
                Some(ms) => {
                    return Err(SimError::config(
                        format!("{key}.stop_ms"),
                        format!("flow `{name}`: stop_ms must be a positive time within the 64-bit ns clock, got {ms}"),
                    ))
                }
            };
            let time_scale = f.time_scale.unwrap_or(1.0);
            if !(time_scale > 0.0 && time_scale.is_finite()) {
                return Err(SimError::config(
                    format!("{key}.time_scale"),
                    format!("flow `{name}`: time_scale must be positive, got {time_scale}"),
                ));
            }
            let working_set = f.working_set.unwrap_or(1.0);
            if !(working_set > 0.0 && working_set <= 1.0) {
                return Err(SimError::config(
                    format!("{key}.working_set"),
                    format!("flow `{name}`: working_set must be in (0, 1], got {working_set}"),
                ));
            }
            if f.request_bytes == Some(0) {
                return Err(SimError::config(
                    format!("{key}.request_bytes"),
                    format!("flow `{name}`: request_bytes must be at least 1, or left out for whole pages"),
                ));
            }
            Ok(Flow {
                time_scale,
                working_set,
                request_bytes: f.request_bytes,
                stream: f.stream,
                placement: f.workload.placement,
                name,
                source,
                queue_depth,
                closed,
                priority: f.priority,
                weight: f.weight.unwrap_or(1),
                seed: f.seed.unwrap_or(config.seed().wrapping_add(i as u64)),
                stop_ns,
                max_requests: f.workload.max_requests,
            })
        })
        .collect()
}

/// A flow's configuration error with the flow's key and name in front.
fn within(key: &str, name: &str, e: SimError) -> SimError {
    match e {
        SimError::Config(c) => SimError::config(format!("{key}.{}", c.key), format!("flow `{name}`: {}", c.problem)),
        e => e,
    }
}

/// `host.fetch_size` and `host.fetch_per_flow`, validated (default: no
/// limit).
pub(crate) fn fetch_size(config: &RunConfig) -> Result<Fetch, SimError> {
    let per_flow = config.host.fetch_per_flow.unwrap_or(false);
    if config.host.fetch_per_flow.is_some() && config.host.fetch_size.is_none() {
        return Err(SimError::config(
            "host.fetch_per_flow",
            "host.fetch_per_flow says what host.fetch_size bounds: set host.fetch_size too, or leave it out",
        ));
    }
    let size = match config.host.fetch_size {
        None => u32::MAX,
        Some(0) => return Err(SimError::config("host.fetch_size", "host.fetch_size must be at least 1")),
        Some(_) if config.flows.is_empty() => {
            return Err(SimError::config(
                "host.fetch_size",
                "host.fetch_size applies to [[flow]] runs; a single workload is limited by host.queue_depth",
            ))
        }
        Some(n) => n,
    };
    Ok(Fetch { size, per_flow })
}

/// Drives `flows` (all of them, or only flow `only`, keeping every flow's part
/// of the space) on `engine` from `offset`; returns each flow's report.
pub(crate) fn drive(
    engine: &mut Engine,
    flows: &[Flow],
    only: Option<usize>,
    fetch: Fetch,
    host: &crate::config::Host,
    offset: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<FlowReport>, SimError> {
    let part = engine.host_pages() / flows.len() as u64;
    let page_size = engine.device.flash.nand().geometry().page_size;
    if part == 0 {
        return Err(SimError::config(
            "flow",
            format!("{} flows cannot share {} logical pages: give fewer flows", flows.len(), engine.host_pages()),
        ));
    }
    let none = TaskSpace { first_page: 0, pages: 0, admitted: Vec::new() };
    let mut sources: Vec<Box<dyn Iterator<Item = Result<Request, SimError>>>> = Vec::new();
    let mut chosen = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        // The flow's working set: the first pages of its part.
        let pages = ((part as f64 * f.working_set).floor() as u64).max(1);
        let scale = host.time_scale * f.time_scale;
        let mut requests = Requests::open(&f.source, &none, pages, page_size, f.seed, scale, host.reorder_window)?;
        if let Some(spec) = &f.placement {
            requests.place(spec, pages, page_size);
        }
        let shift = i as u64 * part * u64::from(page_size);
        let cap = f.request_bytes.unwrap_or(u32::MAX);
        let stream = f.stream;
        let shifted = requests.map(move |r| {
            r.map(|mut r| {
                r.offset += shift;
                r.len = r.len.min(cap);
                // A flow is never periodic tasks: its requests' `task` is at most
                // a generator's lifetime label, which a given stream replaces.
                r.task = stream.or(r.task);
                r
            })
        });
        sources.push(match f.max_requests {
            Some(n) => Box::new(shifted.take(n as usize)),
            None => Box::new(shifted),
        });
        chosen.push(i);
    }
    let mut inputs: Vec<FlowInput<'_>> = sources
        .iter_mut()
        .zip(&chosen)
        .map(|(s, &i)| {
            let f = &flows[i];
            FlowInput {
                requests: &mut **s,
                queue_depth: f.queue_depth,
                closed: f.closed,
                rank: f.priority as u8,
                weight: f.weight,
                stop_ns: f.stop_ns,
                name: f.name.clone(),
                key: format!("flow[{i}]"),
                stats: FlowStats::default(),
            }
        })
        .collect();
    engine.drive_flows(&mut inputs, offset, fetch, progress)?;
    Ok(inputs
        .iter()
        .zip(&chosen)
        .map(|(input, &i)| {
            let f = &flows[i];
            let s = &input.stats;
            FlowReport {
                name: f.name.clone(),
                workload: f.source.describe(),
                priority: f.priority.name().into(),
                weight: f.weight,
                queue_depth: f.queue_depth,
                first_page: i as u64 * part,
                pages: part,
                requests: s.requests,
                host_pages: s.pages,
                response_us: s.all.summary(),
                read_us: s.read.summary(),
                write_us: s.write.summary(),
                alone_response_us: None,
                slowdown: None,
                unaligned_requests: s.unaligned,
                partial_page_writes: s.partial_writes,
                unwritten_page_reads: s.unwritten_reads,
            }
        })
        .collect())
}

/// Fills each flow's alone figures and slowdown in `shared` from the alone
/// runs' reports (one a flow, in order), and the run's fairness.
pub(crate) fn set_slowdowns(shared: &mut Report, alone: &[Report]) {
    for (flow, a) in shared.flows.iter_mut().zip(alone) {
        let Some(a) = a.flows.iter().find(|f| f.name == flow.name) else { continue };
        flow.alone_response_us = Some(a.response_us);
        flow.slowdown = (flow.response_us.count > 0 && a.response_us.count > 0 && a.response_us.mean > 0.0)
            .then(|| flow.response_us.mean / a.response_us.mean);
    }
    let slowdowns: Vec<f64> = shared.flows.iter().filter_map(|f| f.slowdown).collect();
    if slowdowns.len() == shared.flows.len() && !slowdowns.is_empty() {
        let min = slowdowns.iter().copied().fold(f64::INFINITY, f64::min);
        let max = slowdowns.iter().copied().fold(0.0, f64::max);
        shared.fairness = (max > 0.0).then(|| min / max);
    }
}
