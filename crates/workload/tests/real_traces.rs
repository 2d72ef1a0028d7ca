//! Every real trace (`FTLAB_TRACES`, by default `../shared/traces` beside the
//! workspace) read with its format, checked against the counts its README gives
//! (and, where the README rounds, against what the files hold). Runs with the
//! `real-traces` feature; the fixtures the repository carries are tested in
//! `fixtures.rs` without it.
#![allow(clippy::unwrap_used)]

#[path = "support/real_traces_dir.rs"]
mod real_traces_dir;

use std::path::PathBuf;

use ftlab_workload::{
    trace_stats, AddressMapper, AddressMode, HostRequest, Op, ReadOptions, TraceError, TraceFormat, TraceReader,
    TraceStats,
};

fn path(name: &str) -> PathBuf {
    real_traces_dir::real_traces_dir().join(name)
}

fn read(name: &str, format: &str) -> Vec<HostRequest> {
    TraceReader::open(path(name), format.parse().unwrap(), &ReadOptions::default())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn stats(name: &str, format: &str) -> TraceStats {
    let reader = TraceReader::open(path(name), format.parse().unwrap(), &ReadOptions::default()).unwrap();
    trace_stats(reader).unwrap()
}

/// (file, format, requests, reads, writes, devices, total bytes, duration ns)
type Expected = (&'static str, &'static str, u64, u64, u64, usize, u64, u64);

const EXPECTED: [Expected; 8] = [
    ("umass_financial1_head.ssdsim.ascii", "ssdsim", 10_000, 4077, 5923, 22, 55_279_104, 259_601_203_125),
    ("umass_websearch_wsrch-small.mqsim.trace", "mqsim", 24_783, 24_779, 4, 6, 382_117_888, 60_055_212_000),
    ("ms_tpcc-small.mqsim.trace", "mqsim", 6_999, 4381, 2618, 16, 59_718_656, 136_489_000),
    ("msr_cambridge_hm0_sample.csv", "msr", 1000, 508, 492, 1, 9_689_600, 127_233_494_100),
    ("systor17_traces_sample.csv", "systor", 999, 826, 173, 1, 39_122_432, 2_447_767_000),
    ("hadoop_blkparse_blktrace.txt", "blkparse", 15_524, 80, 15_444, 1, 73_236_480, 9_378_425_476),
    ("disksim_ssd-postmark-aligned2.trace", "disksim", 62_257, 51_780, 10_477, 1, 14_173_224_960, 490_436_763_000),
    ("disksim_ssd-iozone-aligned2-100K.trace", "disksim", 100_000, 0, 100_000, 1, 36_855_717_888, 936_449_109_000),
];

#[test]
fn every_shipped_trace_is_covered() {
    let mut names: Vec<String> = std::fs::read_dir(path(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "README.md")
        .collect();
    names.sort();
    let mut covered: Vec<&str> = EXPECTED.iter().map(|e| e.0).collect();
    covered.sort();
    assert_eq!(names, covered, "a trace was added or removed: add it to EXPECTED");
}

#[test]
fn counts_mix_bytes_and_duration_match_the_readme() {
    for (name, format, requests, reads, writes, devices, bytes, duration) in EXPECTED {
        let s = stats(name, format);
        assert_eq!(
            (s.requests, s.reads, s.writes, s.trims, s.devices.len(), s.total_bytes, s.duration_ns),
            (requests, reads, writes, 0, devices, bytes, duration),
            "{name}"
        );
    }
}

#[test]
fn readme_summaries_hold() {
    let fin = stats("umass_financial1_head.ssdsim.ascii", "ssdsim");
    assert!((fin.read_fraction - 0.41).abs() < 0.005, "Financial1 ~41% reads: {}", fin.read_fraction);
    assert!((fin.duration_ns as f64 / 1e9 - 260.0).abs() < 1.0);
    let web = stats("umass_websearch_wsrch-small.mqsim.trace", "mqsim");
    assert!(web.read_fraction > 0.999 && (web.size_mean / 1000.0 - 15.4).abs() < 0.1);
    let tpcc = stats("ms_tpcc-small.mqsim.trace", "mqsim");
    assert!((tpcc.read_fraction - 0.63).abs() < 0.005 && (8000.0..9000.0).contains(&tpcc.size_mean));
    assert!((stats("msr_cambridge_hm0_sample.csv", "msr").read_fraction - 0.51).abs() < 0.005);
    assert!((stats("systor17_traces_sample.csv", "systor").read_fraction - 0.83).abs() < 0.005);
    let blk = stats("hadoop_blkparse_blktrace.txt", "blkparse");
    assert!((blk.write_fraction - 0.995).abs() < 0.001 && blk.sequential_fraction > 0.85);
    assert!((stats("disksim_ssd-postmark-aligned2.trace", "disksim").read_fraction - 0.83).abs() < 0.005);
    let ioz = stats("disksim_ssd-iozone-aligned2-100K.trace", "disksim");
    assert!((ioz.size_mean / 1024.0 - 360.0).abs() < 1.0, "360 KB average: {}", ioz.size_mean);
    assert!((ioz.sequential_fraction - 0.5).abs() < 0.01, "half sequential: {}", ioz.sequential_fraction);
}

fn req(arrival_ns: u64, op: Op, offset: u64, len: u32, device: u32) -> HostRequest {
    HostRequest { arrival_ns, op, offset, len, device }
}

#[test]
fn units_and_op_conventions_on_the_first_records() {
    let fin = read("umass_financial1_head.ssdsim.ascii", "ssdsim");
    assert_eq!(fin[2], req(26_214_000, Op::Write, 303_574 * 512, 7 * 512, 0));
    // The file has no newline after its last line.
    assert_eq!(*fin.last().unwrap(), req(259_601_203_125, Op::Write, 146_550 * 512, 512, 8));
    let web = read("umass_websearch_wsrch-small.mqsim.trace", "mqsim");
    assert_eq!(web[0], req(11_413_000, Op::Read, 657_728 * 512, 16 * 512, 0));
    let tpcc = read("ms_tpcc-small.mqsim.trace", "mqsim");
    assert_eq!(tpcc[0], req(938_513_000, Op::Write, 264_719_034 * 512, 16 * 512, 4));
    // The README calls TPC-C unsorted; the shipped file's times never decrease (ties only).
    assert!(tpcc.windows(2).all(|w| w[1].arrival_ns >= w[0].arrival_ns));
    assert!(tpcc.windows(2).any(|w| w[1].arrival_ns == w[0].arrival_ns));
    let msr = read("msr_cambridge_hm0_sample.csv", "msr");
    assert_eq!(msr[0], req(0, Op::Write, 9_056_014_336, 2048, 0));
    assert_eq!(msr[1].arrival_ns, (128_166_385_295_514_878 - 128_166_385_295_514_663) * 100);
    let systor = read("systor17_traces_sample.csv", "systor");
    assert_eq!(systor[0], req(1_456_095_145_133_076_000, Op::Read, 899_056_122_368, 131_072, 0));
    assert!(systor[1].arrival_ns < systor[0].arrival_ns, "SYSTOR stays in file order");
    let blk = read("hadoop_blkparse_blktrace.txt", "blkparse");
    assert_eq!(blk[0], req(1850, Op::Read, 1_444_645_666 * 512, 256 * 512, 8 << 20 | 16));
    let dispatched = read("hadoop_blkparse_blktrace.txt", "blkparse-dispatch");
    assert_eq!(dispatched.len(), 170);
    let pm = read("disksim_ssd-postmark-aligned2.trace", "disksim");
    assert_eq!(pm[0], req(7_961_833_000, Op::Write, 20_228_336 * 512, 8 * 512, 0));
    let ioz = read("disksim_ssd-iozone-aligned2-100K.trace", "disksim");
    assert_eq!(ioz[0], req(5_265_313_000, Op::Write, 6_357_144 * 512, 8 * 512, 0));
}

#[test]
fn compact_mapping_packs_the_real_footprint() {
    let name = "ms_tpcc-small.mqsim.trace";
    let s = stats(name, "mqsim");
    let reader = TraceReader::open(path(name), TraceFormat::Mqsim, &ReadOptions::default()).unwrap();
    let space = s.footprint_pages * 4096;
    let mut mapped = AddressMapper::new(AddressMode::Compact, space, 4096).unwrap().map_iter(reader);
    let out: Vec<_> = mapped.by_ref().collect::<Result<_, _>>().unwrap();
    let report = mapped.mapper().report();
    // Same page size as the stats' footprint, so the footprint fills the space exactly.
    assert_eq!(report.footprint_pages, Some(s.footprint_pages));
    assert!(out.iter().all(|r| r.end() <= space));
    assert_eq!(out.iter().map(|r| u64::from(r.len)).sum::<u64>(), s.total_bytes);
    assert_eq!(report.requests_out, out.len() as u64);

    let reader = TraceReader::open(path(name), TraceFormat::Mqsim, &ReadOptions::default()).unwrap();
    let small = AddressMapper::new(AddressMode::Compact, space - 4096, 4096).unwrap();
    let err = small.map_iter(reader).find_map(Result::err).unwrap();
    assert!(matches!(err, TraceError::FootprintTooLarge { .. }), "{err}");
}

#[test]
fn modulo_device_and_concat_on_real_traces() {
    let name = "umass_financial1_head.ssdsim.ascii";
    let open = || TraceReader::open(path(name), TraceFormat::Ssdsim, &ReadOptions::default()).unwrap();
    let all = read(name, "ssdsim");
    let space = 64 << 20;

    let mut m = AddressMapper::new(AddressMode::Modulo, space, 4096).unwrap().map_iter(open());
    let out: Vec<_> = m.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(out.len(), all.len());
    assert!(out.iter().all(|r| r.end() <= space));
    assert!(m.mapper().report().wrapped > 0, "Financial1 addresses more than 64 MiB");

    let mut m = AddressMapper::new(AddressMode::Device(1), space, 4096).unwrap().map_iter(open());
    let kept = m.by_ref().collect::<Result<Vec<_>, _>>().unwrap();
    let on_device_1 = all.iter().filter(|r| r.device == 1).count();
    assert!(on_device_1 > 0 && kept.len() == on_device_1 && kept.iter().all(|r| r.device == 1));
    assert_eq!(m.mapper().report().dropped as usize, all.len() - on_device_1);

    let mut mapper = AddressMapper::new(AddressMode::Concat, 1 << 40, 4096).unwrap();
    mapper.try_scan(open()).unwrap();
    let mut m = mapper.map_iter(open());
    let out = m.by_ref().collect::<Result<Vec<_>, _>>().unwrap();
    let report = m.mapper().report();
    assert_eq!(report.devices.len(), 22);
    assert_eq!(report.wrapped, 0, "1 TiB holds all 22 ASUs side by side");
    // Each device's requests land inside its own span, at base + original offset.
    for (orig, mapped) in all.iter().zip(&out) {
        let span = report.devices.iter().find(|d| d.device == orig.device).unwrap();
        assert_eq!(mapped.offset, span.base + orig.offset);
        assert!(mapped.end() <= span.base + span.span);
    }
    assert!(report.to_string().contains("address mode concat"));
}
