//! Several host flows on one device (`[[flow]]`): per-flow response times and
//! slowdowns against each flow run alone.
#![allow(clippy::unwrap_used)]

use ftlab_sim::{run, RunConfig, SimError};

const DEVICE: &str = r#"
seed = 3
[device]
chip = "small-slc"
blocks_per_plane = 64
[ftl]
kind = "pagemap"
over_provisioning = 0.1
[precondition]
fill = true
"#;

fn config(flows: &str) -> RunConfig {
    RunConfig::from_toml(&format!("{DEVICE}{flows}"), "test").unwrap()
}

/// A closed-loop uniform flow of `requests` requests.
fn flow(name: &str, extra: &str, requests: u64, read_fraction: f64) -> String {
    format!(
        "[[flow]]\nname = \"{name}\"\n{extra}\n[flow.workload.generator]\nkind = \"uniform\"\nrequests = {requests}\n\
         read_fraction = {read_fraction}\n"
    )
}

fn slowdown(r: &ftlab_sim::Report, name: &str) -> f64 {
    r.flows.iter().find(|f| f.name == name).unwrap().slowdown.unwrap()
}

#[test]
fn a_flow_alone_has_slowdown_one() {
    let r = run(&config(&flow("only", "queue_depth = 8", 3000, 0.5)), &mut |_| {}).unwrap();
    assert_eq!(r.flows.len(), 1);
    let f = &r.flows[0];
    assert_eq!(f.requests, 3000);
    assert_eq!(f.slowdown, Some(1.0));
    assert_eq!(f.alone_response_us, Some(f.response_us));
    assert_eq!(r.fairness, Some(1.0));
    assert_eq!(r.integrity, "ok");
}

#[test]
fn two_identical_flows_slow_down_alike() {
    let text = format!("{}{}", flow("a", "queue_depth = 8", 4000, 0.5), flow("b", "queue_depth = 8", 4000, 0.5));
    let r = run(&config(&text), &mut |_| {}).unwrap();
    let (a, b) = (slowdown(&r, "a"), slowdown(&r, "b"));
    // Sharing the dies costs each of them about the same.
    assert!(a > 1.2 && b > 1.2, "sharing must cost something: {a} {b}");
    assert!((a / b - 1.0).abs() < 0.15, "identical flows, unlike slowdowns: {a} {b}");
    assert!(r.fairness.unwrap() > 0.85);
    assert_eq!(r.requests, 8000);
    assert_eq!(r.integrity, "ok");
    // Each flow stays in its half of the logical space.
    assert_eq!(r.flows[1].first_page, r.flows[0].pages);
}

#[test]
fn a_starved_flow_shows_a_large_slowdown() {
    // The device takes 8 requests at a time; the urgent flow keeps all 8
    // busy until it ends, so the low-priority flow waits for it.
    let text = format!(
        "[host]\nfetch_size = 8\n{}{}",
        flow("hog", "queue_depth = 8\npriority = \"urgent\"", 6000, 0.0),
        flow("victim", "queue_depth = 2\npriority = \"low\"", 500, 1.0)
    );
    let r = run(&config(&text), &mut |_| {}).unwrap();
    let (hog, victim) = (slowdown(&r, "hog"), slowdown(&r, "victim"));
    assert!(victim > 20.0, "the starved flow's slowdown is {victim}");
    assert!(hog < 1.5, "the favoured flow's slowdown is {hog}");
    assert!(r.fairness.unwrap() < 0.1);
    // Same priority and weight: no starvation.
    let fair = format!(
        "[host]\nfetch_size = 8\n{}{}",
        flow("hog", "queue_depth = 8", 6000, 0.0),
        flow("victim", "queue_depth = 2", 500, 1.0)
    );
    let r = run(&config(&fair), &mut |_| {}).unwrap();
    assert!(slowdown(&r, "victim") < 20.0, "{}", slowdown(&r, "victim"));
}

#[test]
fn weights_share_the_device_within_a_class() {
    // Two like writers behind a fetch of 2: weight 3 gets three fetches to
    // the other's one while both wait.
    let text = format!(
        "[host]\nfetch_size = 2\n{}{}",
        flow("heavy", "queue_depth = 4\nweight = 3", 2000, 0.0),
        flow("light", "queue_depth = 4", 2000, 0.0)
    );
    let r = run(&config(&text), &mut |_| {}).unwrap();
    let (heavy, light) = (slowdown(&r, "heavy"), slowdown(&r, "light"));
    assert!(light > 1.5 * heavy, "weight 3 against 1: slowdowns {heavy} and {light}");
}

#[test]
fn flow_runs_are_deterministic() {
    let text = format!("{}{}", flow("a", "queue_depth = 4", 1500, 0.3), flow("b", "weight = 3", 1500, 0.7));
    let one = run(&config(&text), &mut |_| {}).unwrap();
    let two = run(&config(&text), &mut |_| {}).unwrap();
    assert_eq!(one, two);
}

#[test]
fn open_loop_flows_stop_at_their_stop_time() {
    let text = "[[flow]]\nstop_ms = 50\n[flow.workload.generator]\nkind = \"uniform\"\nrequests = 100000\n\
                arrival = { kind = \"fixed\", interval_ns = 100000 }\n";
    let r = run(&config(text), &mut |_| {}).unwrap();
    // One request every 100 us from 0 to 50 ms inclusive.
    assert_eq!(r.flows[0].requests, 501);
    assert_eq!(r.flows[0].name, "flow-1");
}

#[test]
fn single_workload_reports_have_no_flow_fields() {
    let c =
        RunConfig::from_toml(&format!("{DEVICE}[workload.generator]\nkind = \"uniform\"\nrequests = 500\n"), "test")
            .unwrap();
    let r = run(&c, &mut |_| {}).unwrap();
    let json = serde_json::to_value(&r).unwrap();
    for key in ["flows", "fairness", "unsupported"] {
        assert!(json.get(key).is_none(), "{key} in a single-workload report");
    }
}

fn config_error(text: &str) -> (String, String) {
    match run(&config(text), &mut |_| {}) {
        Err(SimError::Config(c)) => (c.key, c.problem),
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn bad_flows_are_config_errors_naming_the_flow() {
    let (key, problem) = config_error(&format!("{}{}", flow("a", "", 10, 0.0), flow("b", "weight = 0", 10, 0.0)));
    assert_eq!(key, "flow[1].weight");
    assert!(problem.contains("flow `b`"), "{problem}");
    let (key, _) = config_error(&flow("a", "queue_depth = 0", 10, 0.0));
    assert_eq!(key, "flow[0].queue_depth");
    let (key, problem) =
        config_error(&format!("[workload]\npreset = \"uniform-random-write\"\n{}", flow("a", "", 10, 0.0)));
    assert_eq!(key, "workload");
    assert!(problem.contains("[[flow]]"), "{problem}");
    let (key, problem) = config_error("[[flow]]\n[flow.workload]\ntrace = \"x\"\n");
    assert_eq!(key, "flow[0].workload.trace_format");
    assert!(problem.contains("flow `flow-1`"), "{problem}");
    let (key, _) = config_error("[host]\nfetch_size = 4\n[workload]\npreset = \"uniform-random-write\"\n");
    assert_eq!(key, "host.fetch_size");
}

/// A read-only flow bounded by a stop time on a device nothing was written to.
fn unwritten_reader(unwritten_reads: &str) -> RunConfig {
    let text = format!(
        "seed = 3\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[ftl]\nkind = \"pagemap\"\n\
         gc_model = \"mqsim\"\ngc_free_blocks = 8\nunwritten_reads = \"{unwritten_reads}\"\n\
         [[flow]]\nname = \"reader\"\nstop_ms = 20\nqueue_depth = 4\n\
         [flow.workload.generator]\nkind = \"uniform\"\nrequests = 1099511627776\nread_fraction = 1.0\n"
    );
    RunConfig::from_toml(&text, "test").unwrap()
}

#[test]
fn a_flow_bounded_by_time_ends_when_unwritten_reads_cost_a_flash_read() {
    let r = run(&unwritten_reader("flash"), &mut |_| {}).unwrap();
    let f = &r.flows[0];
    // Every read senses a page: time advances and the stop time ends the flow.
    assert!(f.requests > 100, "{}", f.requests);
    assert!(r.flash_ops.reads.get(ftlab_ftl::Purpose::Host) >= f.requests, "one flash read per page read");
    assert!(f.response_us.mean > 0.0, "{:?}", f.response_us);
    assert_eq!(r.integrity, "ok");
}

#[test]
fn a_flow_bounded_by_time_whose_reads_take_no_time_is_an_error_not_a_hang() {
    let e = run(&unwritten_reader("free"), &mut |_| {}).unwrap_err();
    let e = match e {
        SimError::Stopped { error, .. } => *error,
        e => e,
    };
    match e {
        SimError::Config(c) => {
            assert_eq!(c.key, "flow[0].stop_ms");
            assert!(c.problem.contains("without simulated time advancing") && c.problem.contains("reader"), "{c}");
        }
        e => panic!("not a config error naming the flow: {e}"),
    }
}

/// Each flow counts what it asked that ftlab serves in whole pages: requests
/// not page-aligned, pages written in part, and pages read that no write had
/// reached (MQSim serves the sectors asked for; see
/// experiments/mqsim-compare/README.md).
#[test]
fn a_flow_counts_unaligned_requests_partial_writes_and_reads_of_unwritten_pages() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.trace");
    // MQSim's format: arrival ns, device, first sector, sectors, 0 write / 1
    // read; 512-byte sectors, 4 KiB pages.
    std::fs::write(
        &trace,
        "0 0 0 8 0\n\
         1000 0 2 4 0\n\
         2000 0 0 8 1\n\
         3000 0 32 16 1\n\
         4000 0 20 8 1\n",
    )
    .unwrap();
    let text = format!(
        "seed = 3\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[ftl]\nkind = \"pagemap\"\n\
         [metrics]\nslowdown = false\n\
         [[flow]]\nname = \"t\"\nmode = \"open\"\n[flow.workload]\ntrace = {:?}\ntrace_format = \"mqsim\"\n",
        trace.display().to_string()
    );
    let r = run(&RunConfig::from_toml(&text, "test").unwrap(), &mut |_| {}).unwrap();
    let f = &r.flows[0];
    assert_eq!(f.requests, 5);
    // The second write (sectors 2-5 of page 0) and the last read (sectors
    // 20-27: pages 2 and 3) are unaligned; the write rewrites page 0 in part;
    // pages 4, 5, 2 and 3 were never written.
    assert_eq!((f.unaligned_requests, f.partial_page_writes, f.unwritten_page_reads), (2, 1, 4), "{f:?}");
    assert!(f.slowdown.is_none() && f.alone_response_us.is_none(), "metrics.slowdown = false: no alone run");
    assert_eq!(r.integrity, "ok");
}

/// MQSim's `Queue_Fetch_Size` bounds each submission queue: with
/// `host.fetch_per_flow` each flow keeps up to `fetch_size` requests in the
/// device (a flow of depth 4 all 4, one of depth 16 eight, so the deep one
/// gets twice the service); with one limit for all, the flows share the 8
/// slots equally and the deep flow's requests wait in its queue.
#[test]
fn a_fetch_limit_per_flow_bounds_each_queue() {
    let two = |host: &str| {
        let text = format!(
            "{host}\n{}{}",
            flow("shallow", "queue_depth = 4\nstop_ms = 50", 1 << 40, 1.0),
            flow("deep", "queue_depth = 16\nstop_ms = 50", 1 << 40, 1.0)
        );
        let r = run(&config(&text), &mut |_| {}).unwrap();
        assert_eq!(r.integrity, "ok");
        let mean = |name: &str| r.flows.iter().find(|f| f.name == name).unwrap().response_us.mean;
        mean("deep") / mean("shallow")
    };
    let per_flow = two("[host]\nfetch_size = 8\nfetch_per_flow = true\n");
    let shared = two("[host]\nfetch_size = 8\n");
    // Per flow: 16 / (2 x 4) = 2; shared and equal: 16 / 4 = 4.
    assert!((per_flow - 2.0).abs() < 0.3, "{per_flow}");
    assert!((shared - 4.0).abs() < 0.5, "{shared}");
    let (key, problem) = config_error("[host]\nfetch_per_flow = true\n");
    assert_eq!(key, "host.fetch_per_flow");
    assert!(problem.contains("host.fetch_size"), "{problem}");
}

/// Two read-only flows of equal depth, one urgent and one high, for 50 ms,
/// reads held at their dies (`host.dispatch`); returns each flow's mean
/// response, requests served and the report.
fn urgent_and_high(dispatch: &str) -> ((f64, u64), (f64, u64), ftlab_sim::Report) {
    let text = format!(
        "[host]\ndispatch = \"{dispatch}\"\n{}{}",
        flow("urgent", "queue_depth = 8\nstop_ms = 50\npriority = \"urgent\"", 1 << 40, 1.0),
        flow("high", "queue_depth = 8\nstop_ms = 50", 1 << 40, 1.0)
    );
    let r = run(&config(&text), &mut |_| {}).unwrap();
    assert_eq!(r.integrity, "ok");
    let of = |name: &str| {
        let f = r.flows.iter().find(|f| f.name == name).unwrap();
        (f.response_us.mean, f.requests)
    };
    (of("urgent"), of("high"), r)
}

/// With `per-die-priority` a die takes an urgent flow's waiting reads before
/// any other class's, as MQSim's PRIORITY_OUT_OF_ORDER scheduler does: the
/// urgent flow is served faster and more often. Held first come, first served
/// (`per-die-edf`), or dispatched by request, the two flows fare alike.
#[test]
fn an_urgent_flows_reads_pass_the_reads_waiting_at_their_die() {
    let ((urgent, urgent_n), (high, high_n), r) = urgent_and_high("per-die-priority");
    assert!(urgent < 0.8 * high, "urgent {urgent} us against high {high} us");
    assert!(urgent_n as f64 > 1.2 * high_n as f64, "urgent served {urgent_n}, high {high_n}");
    assert_eq!(r.flows[0].requests + r.flows[1].requests, r.requests);
    for dispatch in ["per-die-edf", "request"] {
        let ((urgent, _), (high, _), _) = urgent_and_high(dispatch);
        assert!((urgent / high - 1.0).abs() < 0.1, "{dispatch}: urgent {urgent} us against high {high} us");
    }
    // Deterministic.
    assert_eq!(urgent_and_high("per-die-priority").2, r);
}

/// Reads held at their dies beside writes served at once: every request is
/// served, every page reads back what was written, and the run repeats bit
/// for bit; a time-bounded flow whose reads take no time is still an error.
#[test]
fn held_reads_beside_writes_keep_every_page_and_repeat() {
    for dispatch in ["per-die-priority", "per-die-edf"] {
        let text = format!(
            "[host]\ndispatch = \"{dispatch}\"\nfetch_size = 6\n{}{}",
            flow("mixed", "queue_depth = 8\npriority = \"low\"", 3000, 0.5),
            flow("reader", "queue_depth = 4\npriority = \"medium\"", 2000, 0.9)
        );
        let one = run(&config(&text), &mut |_| {}).unwrap();
        assert_eq!(one.integrity, "ok", "{dispatch}");
        assert_eq!(one.requests, 5000, "{dispatch}");
        assert!(one.flows.iter().all(|f| f.response_us.mean > 0.0), "{dispatch}");
        assert_eq!(run(&config(&text), &mut |_| {}).unwrap(), one, "{dispatch}");
        let mut stalled = unwritten_reader("free");
        stalled.host.dispatch = Some(ftlab_sim::config::Dispatch::PerDieEdf);
        match run(&stalled, &mut |_| {}).unwrap_err() {
            SimError::Stopped { error, .. } => {
                assert!(matches!(*error, SimError::Config(ref c) if c.key == "flow[0].stop_ms"))
            }
            SimError::Config(c) => assert_eq!(c.key, "flow[0].stop_ms"),
            e => panic!("{dispatch}: {e}"),
        }
        let mut flash_reads = unwritten_reader("flash");
        flash_reads.host.dispatch = Some(ftlab_sim::config::Dispatch::PerDiePriority);
        let r = run(&flash_reads, &mut |_| {}).unwrap();
        assert!(r.flows[0].requests > 100, "unwritten reads held at their die end by the stop time");
    }
}

#[test]
fn per_die_priority_needs_flows() {
    let c = RunConfig::from_toml(
        &format!("{DEVICE}[host]\ndispatch = \"per-die-priority\"\n[workload]\npreset = \"uniform-random-write\"\n"),
        "test",
    )
    .unwrap();
    match run(&c, &mut |_| {}) {
        Err(SimError::Config(c)) => {
            assert_eq!(c.key, "host.dispatch");
            assert!(c.problem.contains("[[flow]]") && c.problem.contains("per-die-edf"), "{}", c.problem);
        }
        other => panic!("expected a config error, got {other:?}"),
    }
}

/// Deep-queued reads of a two-plane device, held at their dies.
fn plane_pair_reader(multi_plane_reads: bool, unwritten: bool) -> RunConfig {
    let ftl = if unwritten {
        "gc_model = \"mqsim\"\ngc_free_blocks = 8\nunwritten_reads = \"flash\"\n"
    } else {
        "over_provisioning = 0.1\n[precondition]\nfill = true\n"
    };
    let text = format!(
        "seed = 3\n[device]\nchip = \"small-slc\"\ndies = 2\nplanes = 2\nblocks_per_plane = 32\n\
         [device.commands]\nmulti_plane = true\nserial_dies = true\nreads_first = true\n\
         [host]\ndispatch = \"per-die-edf\"\nmulti_plane_reads = {multi_plane_reads}\n\
         [ftl]\nkind = \"pagemap\"\n{ftl}\
         [[flow]]\nname = \"reader\"\nqueue_depth = 64\n\
         [flow.workload.generator]\nkind = \"uniform\"\nrequests = 20000\nread_fraction = 1.0\n"
    );
    RunConfig::from_toml(&text, "test").unwrap()
}

/// With `host.multi_plane_reads` a die that takes a waiting read takes the
/// reads waiting for its other plane at the same page offset with it, as one
/// multi-plane read (one array time for both), so a deep queue of reads is
/// served sooner; without it, no read is multi-plane. Both for pages on the
/// flash and for pages never written that the page map reads flash for.
#[test]
fn reads_waiting_for_two_planes_at_one_offset_go_as_one_multi_plane_read() {
    for unwritten in [false, true] {
        let one = run(&plane_pair_reader(true, unwritten), &mut |_| {}).unwrap();
        let off = run(&plane_pair_reader(false, unwritten), &mut |_| {}).unwrap();
        let host = ftlab_ftl::Purpose::Host;
        let pairs = one.flash_ops.multi_plane.get(host);
        assert_eq!(off.flash_ops.multi_plane.get(host), 0, "unwritten {unwritten}");
        assert!(pairs > 200, "unwritten {unwritten}: {pairs} multi-plane reads");
        // Every page is still read once, and reads back what was written.
        assert_eq!(one.flash_ops.reads.get(host), off.flash_ops.reads.get(host), "unwritten {unwritten}");
        assert_eq!((one.requests, one.integrity.as_str()), (20000, "ok"));
        let (m1, m0) = (one.flows[0].response_us.mean, off.flows[0].response_us.mean);
        assert!(m1 < m0, "unwritten {unwritten}: {m1} us with multi-plane reads, {m0} us without");
        assert!(one.sim_seconds < off.sim_seconds, "unwritten {unwritten}");
        assert_eq!(run(&plane_pair_reader(true, unwritten), &mut |_| {}).unwrap(), one);
    }
}

#[test]
fn multi_plane_reads_need_flows_held_at_their_dies_and_a_chip_that_has_them() {
    let key_of = |c: RunConfig| match run(&c, &mut |_| {}) {
        Err(SimError::Config(c)) => (c.key, c.problem),
        other => panic!("expected a config error, got {other:?}"),
    };
    let mut by_request = plane_pair_reader(true, false);
    by_request.host.dispatch = Some(ftlab_sim::config::Dispatch::Request);
    let (key, problem) = key_of(by_request);
    assert_eq!(key, "host.multi_plane_reads");
    assert!(problem.contains("per-die-edf"), "{problem}");
    let mut no_commands = plane_pair_reader(true, false);
    no_commands.device.commands.multi_plane = false;
    let (key, problem) = key_of(no_commands);
    assert_eq!(key, "host.multi_plane_reads");
    assert!(problem.contains("device.commands.multi_plane"), "{problem}");
    let mut buffered = plane_pair_reader(true, false);
    buffered.device.read_buffer_pages = Some(4);
    let (key, problem) = key_of(buffered);
    assert_eq!(key, "host.multi_plane_reads");
    assert!(problem.contains("device.read_buffer_pages"), "{problem}");
}

/// Grouped reads beside writes that keep garbage collection moving pages
/// under the queued reads, two classes of flows, deep queues: every request
/// is served, every page reads back, some reads go two planes at once, and
/// the run repeats bit for bit.
#[test]
fn grouped_reads_beside_writes_and_garbage_collection_keep_every_page_and_repeat() {
    let text = "seed = 5\n[device]\nchip = \"small-slc\"\nplanes = 2\nblocks_per_plane = 32\n\
         [device.commands]\nmulti_plane = true\nserial_dies = true\nreads_first = true\n\
         [host]\ndispatch = \"per-die-priority\"\nmulti_plane_reads = true\nfetch_size = 48\n\
         [ftl]\nkind = \"pagemap\"\ngc_model = \"mqsim\"\ngc_free_blocks = 8\nunwritten_reads = \"flash\"\n\
         [precondition]\nfill = true\n"
        .to_string()
        + &flow("mixed", "queue_depth = 16\npriority = \"low\"", 6000, 0.4)
        + &flow("reader", "queue_depth = 32\npriority = \"high\"", 6000, 1.0);
    let c = RunConfig::from_toml(&text, "test").unwrap();
    let one = run(&c, &mut |_| {}).unwrap();
    assert_eq!((one.requests, one.integrity.as_str()), (12000, "ok"));
    assert!(one.erases > 0, "no garbage collection ran");
    assert!(one.flash_ops.multi_plane.get(ftlab_ftl::Purpose::Host) > 50, "{:?}", one.flash_ops.multi_plane);
    assert_eq!(run(&c, &mut |_| {}).unwrap(), one);
}

/// Placement by flow on an FDP device: a random-overwrite flow and a
/// sequential one, each writing its own half of the device, with and without
/// a stream each. Kept apart by their handles, the sequential flow's units
/// fall invalid whole and the WAF drops; without streams both share handle 0
/// and the device behaves as a page map.
#[test]
fn flows_with_streams_keep_their_data_apart_on_an_fdp_device() {
    let run_with = |streams: bool| {
        let stream = |s: u32| if streams { format!("stream = {s}\n") } else { String::new() };
        let text = format!(
            "seed = 3\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[ftl]\nkind = \"fdp\"\nhandles = 2\n\
             isolation = \"persistently\"\n[metrics]\nslowdown = false\n\
             [[flow]]\nname = \"random\"\nqueue_depth = 4\n{}[flow.workload.generator]\nkind = \"uniform\"\nrequests = 40000\n\
             [[flow]]\nname = \"sequential\"\nqueue_depth = 4\n{}[flow.workload.generator]\nkind = \"sequential\"\nrequests = 40000\n",
            stream(0),
            stream(1)
        );
        let r = run(&RunConfig::from_toml(&text, "test").unwrap(), &mut |_| {}).unwrap();
        assert_eq!(r.integrity, "ok");
        let curve = |name: &str| r.ftl_curves[name].clone();
        (r.waf.unwrap(), curve("fdp_host_pages_by_handle"), curve("fdp_media_pages_by_handle"))
    };
    let (apart, host, media) = run_with(true);
    let (shared, shared_host, _) = run_with(false);
    assert_eq!(host, vec![40_000.0, 40_000.0], "each flow through its handle");
    assert_eq!(shared_host, vec![80_000.0, 0.0], "no stream: the default handle");
    assert!(apart < 0.8 * shared, "WAF {apart} with a handle a flow, {shared} sharing one");
    let waf = |h: usize| media[h] / host[h];
    assert!(waf(1) < waf(0), "the sequential flow's handle copies less: {} against {}", waf(1), waf(0));
}

/// `ftl.gc_queue` under per-die dispatch and a deep queue: garbage
/// collection's commands and the host's programs wait in per-die queues and
/// the planes of a die collecting together share multi-plane commands; every
/// request is served, every page reads back, a reader beside the writer is
/// served, and the run repeats bit for bit. Without the queues no garbage
/// collection command pairs.
#[test]
fn queued_collection_under_per_die_dispatch_pairs_planes_and_keeps_every_page() {
    let text = |queue: bool| {
        format!(
            "seed = 5\n[device]\nchip = \"small-slc\"\nplanes = 2\nblocks_per_plane = 32\n\
             [device.commands]\nmulti_plane = true\nserial_dies = true\nreads_first = true\n\
             [host]\ndispatch = \"per-die-priority\"\nfetch_size = 256\n\
             [ftl]\nkind = \"pagemap\"\ngc_model = \"mqsim\"\ngc_free_blocks = 8\ngc_queue = {queue}\n\
             [precondition]\nfill = true\n"
        ) + &flow("writer", "queue_depth = 256", 20000, 0.0)
            + &flow("reader", "queue_depth = 8\npriority = \"high\"", 4000, 1.0)
    };
    let queued = RunConfig::from_toml(&text(true), "test").unwrap();
    let q = run(&queued, &mut |_| {}).unwrap();
    assert_eq!((q.requests, q.integrity.as_str()), (24000, "ok"));
    assert!(q.erases > 0, "no garbage collection ran");
    let gc_multi = q.flash_ops.multi_plane.get(ftlab_ftl::Purpose::Gc);
    assert!(gc_multi > q.erases / 2, "{gc_multi} multi-plane GC commands for {} erases", q.erases);
    assert_eq!(run(&queued, &mut |_| {}).unwrap(), q);
    let t = run(&RunConfig::from_toml(&text(false), "test").unwrap(), &mut |_| {}).unwrap();
    assert_eq!((t.requests, t.integrity.as_str()), (24000, "ok"));
    assert_eq!(t.flash_ops.multi_plane.get(ftlab_ftl::Purpose::Gc), 0);
}

#[test]
fn gc_queue_is_refused_under_a_data_cache() {
    let text = "[device]\nchip = \"small-slc\"\n[device.data_cache]\npages = 64\n\
                [ftl]\nkind = \"pagemap\"\ngc_model = \"mqsim\"\ngc_queue = true\n"
        .to_string()
        + &flow("writer", "", 100, 0.0);
    match run(&RunConfig::from_toml(&text, "test").unwrap(), &mut |_| {}) {
        Err(SimError::Config(c)) => {
            assert_eq!(c.key, "device.data_cache");
            assert!(c.problem.contains("gc_queue"), "{}", c.problem);
        }
        other => panic!("expected a config error, got {other:?}"),
    }
}
