//! The host side's timing against the queueing model: no command starts before
//! its request arrives or before the clock, whatever the arrivals (ties,
//! bursts) and the queue depth, in both dispatch modes; on one die with
//! page-sized writes, responses are exactly those of a single FIFO server.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

use ftlab_ftl::pagemap::PageMapConfig;
use ftlab_ftl::{Flash, FtlBuilder};
use ftlab_nand::{Nand, SimTime, StoreKind};
use ftlab_sim::config::{Dispatch, Host, RunConfig};
use ftlab_sim::source::Request;
use ftlab_sim::{Engine, SimError};
use ftlab_workload::Op;

const PAGE: u64 = 4096;
/// small-slc: a 4224-byte page+OOB transfer at 40 MB/s, then a 200 us program.
const WRITE_NS: u64 = 105_600 + 200_000;

/// One die, no background work, `queue_depth` requests outstanding.
fn one_die(queue_depth: u32, dispatch: Dispatch) -> Engine {
    let c = RunConfig::from_toml("[device]\nchannels = 1\nways = 1\nblocks_per_plane = 16\n", "t").unwrap();
    let mut flash = Flash::new(Nand::new(&c.device.nand_config(1).unwrap()).unwrap());
    let ftl = PageMapConfig::default().format(&mut flash.io(SimTime::ZERO)).unwrap();
    let host = Host { queue_depth, closed: false, time_scale: 1.0, idle_threshold_ns: u64::MAX, reorder_window: 16 };
    let mut engine = Engine::new(flash, ftl, host, StoreKind::Token, None);
    engine.set_dispatch(dispatch);
    engine.start_measuring(false);
    engine
}

/// One-page writes to distinct pages arriving at `arrivals` (sorted).
fn writes(arrivals: &[u64]) -> Vec<Result<Request, SimError>> {
    arrivals
        .iter()
        .enumerate()
        .map(|(i, &arrival)| {
            Ok(Request {
                arrival,
                op: Op::Write,
                offset: i as u64 * PAGE,
                len: PAGE as u32,
                deadline: None,
                task: None,
                expiry: None,
            })
        })
        .collect()
}

/// The responses of a single FIFO server with service time `s` (Lindley's
/// recursion): the queue depth does not change them, since the die serves one
/// page at a time in arrival order anyway.
fn fifo_responses(arrivals: &[u64], s: u64) -> Vec<u64> {
    let mut done = 0u64;
    arrivals
        .iter()
        .map(|&a| {
            done = done.max(a) + s;
            done - a
        })
        .collect()
}

/// Runs `arrivals` and compares the write responses with the FIFO model's.
fn check(arrivals: &[u64], queue_depth: u32, dispatch: Dispatch) {
    let mut engine = one_die(queue_depth, dispatch);
    engine.drive(&mut writes(arrivals).into_iter(), 0, false, &mut |_| {}).unwrap();
    let want = fifo_responses(arrivals, WRITE_NS);
    let w = &engine.measured.write;
    let what = format!("{dispatch:?} at depth {queue_depth}, arrivals {arrivals:?}");
    assert_eq!(engine.device.flash().counters().erases.total(), 0, "{what}: no GC in the run");
    assert_eq!(w.max_ns(), want.iter().copied().max().unwrap(), "{what}");
    assert_eq!(w.sum_ns(), want.iter().map(|&r| u128::from(r)).sum::<u128>(), "{what}");
}

/// Thirty-three writes a second apart fill a 32-deep queue's slots with
/// completions long past; the 33rd and a 34th share a timestamp. The 34th used
/// to start at the oldest slot's completion, 31 s before it arrived, and wait
/// ~28 s on the die: its response must be two writes' worth.
#[test]
fn a_request_never_starts_before_it_arrives_when_the_slots_freed_long_ago() {
    let mut arrivals: Vec<u64> = (0..33).map(|i| i * 1_000_000_000).collect();
    arrivals.push(32_000_000_000);
    for dispatch in [Dispatch::Request, Dispatch::PerDieEdf] {
        check(&arrivals, 32, dispatch);
        let mut engine = one_die(32, dispatch);
        engine.drive(&mut writes(&arrivals).into_iter(), 0, false, &mut |_| {}).unwrap();
        assert_eq!(engine.measured.write.max_ns(), 2 * WRITE_NS, "{dispatch:?}");
    }
}

/// Gaps between arrivals: mostly ties and short gaps (bursts), sometimes idle.
fn gaps() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(
        prop_oneof![
            4 => Just(0u64),
            3 => 1u64..WRITE_NS,
            2 => WRITE_NS..4 * WRITE_NS,
            1 => 1_000_000u64..2_000_000_000,
        ],
        1..120,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn responses_are_the_fifo_servers_at_any_depth_with_ties(gaps in gaps(), depth in 1u32..40) {
        let arrivals: Vec<u64> = gaps.iter().scan(0u64, |t, g| { *t += g; Some(*t) }).collect();
        check(&arrivals, depth, Dispatch::Request);
        check(&arrivals, depth, Dispatch::PerDieEdf);
    }
}
