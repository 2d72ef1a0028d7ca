//! Unit tests of `zns-host`'s copy placement: SepBIT's classes put each copy
//! in the zone of its class by origin and age, and the default keeps a copy
//! zone a stream.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::testing::{flash, one_die};
use crate::Flash;
use ftlab_nand::SimTime;

/// One die of 32 zones of one 64-page block.
fn device() -> Flash {
    flash(one_die(32, 64), 1)
}

fn sepbit(streams: u32) -> ZnsHostConfig {
    ZnsHostConfig { streams, gc_placement: GcPlacement::Sepbit, ..ZnsHostConfig::default() }
}

/// Writes `lpns` on `stream`, page `l` holding token `l + 1000 * round`.
fn write(host: &mut ZnsHost, f: &mut Flash, lpns: std::ops::Range<u32>, stream: u32, round: u64) {
    for l in lpns {
        let mut io = f.io(SimTime::ZERO);
        let hint = Hint { stream: Some(stream), ..Hint::default() };
        host.write(&mut io, Lpn(l), Payload::Token(u64::from(l) + 1000 * round), &hint).unwrap();
    }
}

/// The zone group (`zone_stream_by_zone`, the zone report) of the zone
/// holding `lpn`.
fn group_of(host: &ZnsHost, lpn: u32) -> u32 {
    let curves = host.curves();
    let groups = &curves.iter().find(|(n, _)| *n == "zone_stream_by_zone").unwrap().1;
    groups[host.zone_of(host.map[lpn as usize]) as usize] as u32
}

/// A class-1 zone's surviving pages go to class 3; a stream-0 zone's pages
/// old, middle-aged and young against ℓ go to classes 6, 5 and 4; each class
/// its own zone, and the zone report says which.
#[test]
fn copies_end_in_the_zone_of_their_class_by_origin_and_age() {
    let mut f = device();
    let mut host = ZnsHost::format(sepbit(2), &mut f.io(SimTime::ZERO)).unwrap();
    // Zone A, stream 1 (class 1): pages 0..64, clock 0..64.
    write(&mut host, &mut f, 0..64, 1, 0);
    let a = host.zone_of(host.map[0]);
    // Zone B, stream 0: four old pages, four middle-aged, four young, with
    // host writes elsewhere between them (the clock moved on as 1,000 and
    // 100 host writes would move it), then filler.
    write(&mut host, &mut f, 100..104, 0, 0);
    host.classes.as_mut().unwrap().clock += 1000;
    write(&mut host, &mut f, 104..108, 0, 0);
    host.classes.as_mut().unwrap().clock += 100;
    write(&mut host, &mut f, 108..112, 0, 0);
    write(&mut host, &mut f, 200..252, 0, 0);
    let b = host.zone_of(host.map[100]);
    assert_eq!(host.zone_of(host.map[251]), b, "zone B holds the old, middle, young pages and the filler");
    // The filler and most of zone A overwritten: A keeps 60..64, B its 12.
    write(&mut host, &mut f, 200..252, 0, 1);
    write(&mut host, &mut f, 0..60, 1, 1);
    assert_eq!((host.valid[a as usize], host.valid[b as usize]), (4, 12));
    // ℓ = 50 host pages: 4ℓ = 200, 16ℓ = 800. The ages now (clock 1340):
    // old about 1,275, middle about 270, young about 166.
    let classes = host.classes.as_mut().unwrap();
    classes.window_sum = Some(50 * u64::from(super::super::sepbit::WINDOW));
    assert_eq!(classes.clock, 1340);
    let mut io = f.io(SimTime::ZERO);
    host.collect_zone(&mut io, a).unwrap();
    host.collect_zone(&mut io, b).unwrap();
    // Copy zones are groups streams + 0..4 for classes 3..6.
    for (lpns, group, what) in [
        (60..64, 2, "class 3 (from a class-1 zone)"),
        (108..112, 3, "class 4 (young)"),
        (104..108, 4, "class 5 (middle-aged)"),
        (100..104, 5, "class 6 (old)"),
    ] {
        for l in lpns {
            assert_eq!(group_of(&host, l), group, "page {l} should be in {what}");
            let mut io = f.io(SimTime::ZERO);
            let round = u64::from(l < 60 || (200..252).contains(&l));
            assert_eq!(host.read(&mut io, Lpn(l)).unwrap(), Some(Payload::Token(u64::from(l) + 1000 * round)));
        }
    }
    // Four copy zones, four pages each; A and B reset.
    let groups: Vec<u32> = (2..6).collect();
    let zones: Vec<u32> =
        groups.iter().map(|&g| host.zone_stream.iter().position(|&s| s == g).unwrap() as u32).collect();
    assert!(zones.iter().all(|&z| host.valid[z as usize] == 4), "{zones:?}");
    assert_eq!((host.state(a), host.state(b)), (ZoneState::Empty, ZoneState::Empty));
    // Zone A's lifetime (opened at clock 0, reclaimed at 1340) joined ℓ's
    // batch; zone B (stream 0) did not.
    let classes = host.classes.as_ref().unwrap();
    assert_eq!((classes.batch_len, classes.batch_sum), (1, 1340));
    host.check_invariants(&f).unwrap();
}

/// With one stream there is no class 1: every victim's pages go by age, and
/// the host writes' zones measure ℓ.
#[test]
fn with_one_stream_copies_go_by_age_and_host_zones_measure_the_threshold() {
    let mut f = device();
    let mut host = ZnsHost::format(sepbit(1), &mut f.io(SimTime::ZERO)).unwrap();
    write(&mut host, &mut f, 0..64, 0, 0);
    write(&mut host, &mut f, 0..60, 0, 1);
    let a = host.zone_of(host.map[60]);
    let mut io = f.io(SimTime::ZERO);
    host.collect_zone(&mut io, a).unwrap();
    // ℓ not measured yet: age classes say class 4 (group 1 + 1).
    assert!((60..64).all(|l| group_of(&host, l) == 2));
    let classes = host.classes.as_ref().unwrap();
    assert_eq!((classes.batch_len, classes.batch_sum), (1, 124));
}

/// The default keeps a copy zone a stream and no SepBIT state (nothing in
/// RAM or the gauges).
#[test]
fn stream_placement_keeps_a_copy_zone_a_stream() {
    let mut f = device();
    let config = ZnsHostConfig { streams: 2, ..ZnsHostConfig::default() };
    let mut host = ZnsHost::format(config, &mut f.io(SimTime::ZERO)).unwrap();
    write(&mut host, &mut f, 0..64, 1, 0);
    write(&mut host, &mut f, 0..60, 1, 1);
    let a = host.zone_of(host.map[60]);
    let mut io = f.io(SimTime::ZERO);
    host.collect_zone(&mut io, a).unwrap();
    assert!((60..64).all(|l| group_of(&host, l) == 1), "stream 1's copy zone");
    assert!(host.classes.is_none());
    assert!(host.gauges().iter().all(|(n, _)| *n != "sepbit_threshold_pages"));
    let sep = ZnsHost::format(sepbit(2), &mut device().io(SimTime::ZERO)).unwrap();
    let tables = (sep.map.len() + sep.owner.len() + sep.valid.len()) as u64 * 4 + sep.dev.ram_bytes();
    assert_eq!(sep.ram_bytes() - tables, u64::from(sep.logical) * 8 + 32 * 8 + 32, "ages in host RAM");
    assert_eq!(
        host.ram_bytes(),
        (host.map.len() + host.owner.len() + host.valid.len()) as u64 * 4 + host.dev.ram_bytes()
    );
}

/// After a power cut the copies' classes restart (the clock, the ages and ℓ
/// are host RAM) and every written page reads back.
#[test]
fn a_power_cut_restarts_the_classes_and_keeps_the_data() {
    let mut f = device();
    let mut host = ZnsHost::format(sepbit(2), &mut f.io(SimTime::ZERO)).unwrap();
    write(&mut host, &mut f, 0..64, 1, 0);
    write(&mut host, &mut f, 64..100, 0, 0);
    host.classes.as_mut().unwrap().window_sum = Some(160);
    let t = SimTime(1_000_000_000);
    f.power_cut(t);
    let mut host = ZnsHost::recover(sepbit(2), &mut f.io(t)).unwrap();
    let classes = host.classes.as_ref().unwrap();
    assert_eq!((classes.clock, classes.window_sum, classes.batch_len), (0, None, 0));
    assert_eq!(host.gauges().iter().find(|(n, _)| *n == "sepbit_threshold_pages").map(|g| g.1), Some(0.0));
    for l in 0..100 {
        let mut io = f.io(t);
        assert_eq!(host.read(&mut io, Lpn(l)).unwrap(), Some(Payload::Token(u64::from(l))));
    }
    host.check_invariants(&f).unwrap();
}
