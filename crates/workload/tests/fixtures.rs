//! The trace fixtures the repository carries (`tests/fixtures/`, see its README):
//! every request of every format checked exactly, and the awkward cases — headers,
//! compression, ties, malformed lines.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use ftlab_workload::trace::Compression;
use ftlab_workload::{HostRequest, Op, ReadOptions, TraceError, TraceFormat, TraceReader};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/")).join(name)
}

fn open(name: &str, format: &str) -> TraceReader {
    TraceReader::open(fixture(name), format.parse().unwrap(), &ReadOptions::default()).unwrap()
}

fn read(name: &str, format: &str) -> Vec<HostRequest> {
    open(name, format).collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn req(arrival_ns: u64, op: Op, offset: u64, len: u32, device: u32) -> HostRequest {
    HostRequest { arrival_ns, op, offset, len, device }
}

const BLK_DEV: u32 = 8 << 20 | 16;

/// (file, format, every request it holds)
fn expected() -> Vec<(&'static str, &'static str, Vec<HostRequest>)> {
    let mqsim = vec![
        req(11_413_000, Op::Read, 657_728 * 512, 16 * 512, 0),
        req(11_413_000, Op::Write, 657_744 * 512, 8 * 512, 1),
        req(12_000_000, Op::Write, 0, 512, 0),
    ];
    vec![
        (
            "umass_header.csv",
            "umass",
            vec![
                req(0, Op::Write, 303_567 * 512, 3584, 0),
                req(26_214_000, Op::Read, 55_590 * 512, 512, 1),
                req(26_214_000, Op::Write, 303_574 * 512, 4096, 0),
                req(1_500_000_000, Op::Read, 8 * 512, 8192, 2),
            ],
        ),
        (
            "msr.csv",
            "msr",
            vec![
                req(0, Op::Write, 3_154_464_768, 4096, 0),
                req(23_930 * 100, Op::Read, 3_154_468_864, 16_384, 0),
                req(23_930 * 100, Op::Read, 0, 512, 1),
                req(10_023_930 * 100, Op::Write, 8192, 65_536, 0),
            ],
        ),
        (
            "systor.csv",
            "systor",
            vec![
                req(1_456_095_145_133_076_000, Op::Read, 899_056_122_368, 131_072, 3),
                req(1_456_095_145_131_000_000, Op::Write, 4096, 4096, 3),
                req(1_456_095_145_133_076_000, Op::Write, 0, 512, 0),
            ],
        ),
        (
            "blkparse.txt",
            "blkparse",
            vec![
                req(1850, Op::Read, 1_444_645_666 * 512, 256 * 512, BLK_DEV),
                req(2_000_000, Op::Write, 2048 * 512, 8 * 512, BLK_DEV),
                req(3_500_000, Op::Trim, 4096 * 512, 16 * 512, BLK_DEV),
            ],
        ),
        ("blkparse.txt", "blkparse-dispatch", vec![req(14_000, Op::Read, 1_444_645_666 * 512, 256 * 512, BLK_DEV)]),
        (
            "disksim.trace",
            "disksim",
            vec![
                req(5_265_313_000, Op::Write, 6_357_144 * 512, 8 * 512, 0),
                req(5_265_313_000, Op::Read, 6_357_152 * 512, 8 * 512, 0),
                req(5_300_000_500, Op::Read, 0, 16 * 512, 1),
                req(5_301_000_000, Op::Write, 100 * 512, 512, 0),
            ],
        ),
        ("mqsim.trace", "mqsim", mqsim.clone()),
        ("mqsim.trace.gz", "mqsim", mqsim),
        (
            "ssdsim.ascii",
            "ssdsim",
            vec![
                req(0, Op::Write, 303_567 * 512, 7 * 512, 0),
                req(26_214_000, Op::Read, 55_590 * 512, 6 * 512, 1),
                req(26_214_000, Op::Write, 303_574 * 512, 7 * 512, 0),
            ],
        ),
    ]
}

#[test]
fn every_fixture_reads_to_exactly_its_requests() {
    for (name, format, requests) in expected() {
        assert_eq!(read(name, format), requests, "{name} as {format}");
    }
}

#[test]
fn every_fixture_is_covered() {
    let mut names: Vec<String> = std::fs::read_dir(fixture(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "README.md")
        .collect();
    names.sort();
    let mut covered: Vec<&str> = expected().iter().map(|e| e.0).collect();
    covered.extend(["not_compressed.trace.gz", "malformed_line3.umass.csv", "malformed_line1.mqsim.trace"]);
    covered.sort();
    covered.dedup();
    assert_eq!(names, covered, "a fixture was added or removed: test it here and list it in its README");
}

#[test]
fn compression_is_detected_by_content_and_a_name_must_not_lie() {
    assert_eq!(open("mqsim.trace.gz", "mqsim").compression(), Compression::Gzip);
    assert_eq!(open("mqsim.trace", "mqsim").compression(), Compression::None);
    let err =
        TraceReader::open(fixture("not_compressed.trace.gz"), TraceFormat::Mqsim, &ReadOptions::default()).unwrap_err();
    assert!(matches!(err, TraceError::CompressionMismatch { named: Compression::Gzip, found: Compression::None, .. }));
    assert!(err
        .to_string()
        .starts_with(&format!("{}: the name says gzip", fixture("not_compressed.trace.gz").display())));
}

fn compress(kind: Compression, data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    match kind {
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Compression::Bzip2 => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Compression::Zstd => zstd::encode_all(data, 3).unwrap(),
        Compression::None => data.to_vec(),
    }
}

#[test]
fn compressed_fixtures_read_identically_whatever_their_name() {
    let dir = tempfile::tempdir().unwrap();
    for (name, format) in [("systor.csv", "systor"), ("msr.csv", "msr"), ("blkparse.txt", "blkparse")] {
        let plain = std::fs::read(fixture(name)).unwrap();
        let expected = read(name, format);
        for (kind, ext) in [(Compression::Gzip, "gz"), (Compression::Bzip2, "bz2"), (Compression::Zstd, "zst")] {
            // A name that promises nothing, and the name the content deserves.
            for file in [dir.path().join(format!("{name}.{kind:?}.txt")), dir.path().join(format!("{name}.{ext}"))] {
                std::fs::write(&file, compress(kind, &plain)).unwrap();
                let reader = TraceReader::open(&file, format.parse().unwrap(), &ReadOptions::default()).unwrap();
                assert_eq!(reader.compression(), kind);
                let got: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
                assert_eq!(got, expected, "{}", file.display());
            }
        }
    }
}

#[test]
fn multi_member_gzip_is_read_to_the_end() {
    let plain = std::fs::read(fixture("msr.csv")).unwrap();
    let (a, b) = plain.split_at(plain.len() / 2 + 7); // mid-line on purpose
    let mut gz = compress(Compression::Gzip, a);
    gz.extend(compress(Compression::Gzip, b));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hm0");
    std::fs::write(&file, gz).unwrap();
    let got: Vec<_> =
        TraceReader::open(&file, TraceFormat::Msr, &ReadOptions::default()).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(got, read("msr.csv", "msr"));
}

#[test]
fn a_bad_line_is_reported_with_file_and_line_or_counted() {
    let file = fixture("malformed_line3.umass.csv");
    let mut reader = open("malformed_line3.umass.csv", "umass");
    assert_eq!(reader.next().unwrap().unwrap(), req(0, Op::Write, 100 * 512, 4096, 0));
    assert_eq!(reader.next().unwrap().unwrap(), req(500_000_000, Op::Read, 108 * 512, 4096, 0));
    let err = reader.next().unwrap().unwrap_err();
    assert!(matches!(err, TraceError::Malformed { line: 3, .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "{}:3: expected 5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp), found \"1,2,3\"",
            file.display()
        )
    );
    let err = reader.next().unwrap().unwrap_err();
    assert!(matches!(err, TraceError::ZeroLength { line: 4, .. }), "{err}");
    assert_eq!(reader.next().unwrap().unwrap(), req(1_500_000_000, Op::Write, 124 * 512, 512, 0));
    assert!(reader.next().is_none());

    let opts = ReadOptions { skip_bad_lines: true };
    let mut reader = TraceReader::open(&file, TraceFormat::Umass, &opts).unwrap();
    let kept: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(kept.iter().map(|r| r.offset / 512).collect::<Vec<_>>(), [100, 108, 124]);
    assert_eq!((reader.skipped(), reader.skipped_lines()), (2, &[3u64, 4][..]));
}

#[test]
fn a_bad_first_line_is_an_error_not_a_header() {
    let file = fixture("malformed_line1.mqsim.trace");
    let err = open("malformed_line1.mqsim.trace", "mqsim").next().unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}:1: expected a non-negative time in nanoseconds (field 1), found \"abc\"", file.display())
    );
    let opts = ReadOptions { skip_bad_lines: true };
    let got: Vec<_> = TraceReader::open(&file, TraceFormat::Mqsim, &opts).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(got, [req(0, Op::Write, 8 * 512, 8 * 512, 0)]);
}

#[test]
fn the_wrong_format_fails_on_the_first_line_or_yields_no_request() {
    let err = open("msr.csv", "mqsim").next().unwrap().unwrap_err();
    assert!(matches!(err, TraceError::Malformed { line: 1, .. }), "{err}");
    assert!(err.to_string().contains("5 whitespace-separated fields"), "{err}");
    // blkparse ignores lines that are not events: an MSR file holds none.
    let all: Vec<_> = open("msr.csv", "blkparse").collect();
    assert_eq!(all.len(), 1);
    let Err(err) = &all[0] else { panic!("{:?}", all[0]) };
    assert!(matches!(err, TraceError::NoRequests { lines: 4, skipped: 0, .. }), "{err}");
    assert!(err.to_string().contains("no request in 4 lines read as blkparse"), "{err}");
}
