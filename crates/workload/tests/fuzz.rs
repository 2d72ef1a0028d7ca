//! Fuzzing the trace readers: the repository's fixtures with fields replaced by
//! hostile tokens, lines cut short or spliced with random bytes, and raw random
//! input, in every format, strict and skipping bad lines. A reader must never
//! panic or loop; it yields requests that make sense (a length above zero, an
//! end that fits 64 bits) or an error naming the input.
//!
//! The default case count suits CI; for a long run outside it, set
//! `FTLAB_FUZZ_CASES` (e.g. `FTLAB_FUZZ_CASES=200000 cargo test --release -p
//! ftlab-workload --test fuzz`). A failing case found that way is kept by
//! proptest in `fuzz.proptest-regressions` and replayed by every later run.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use ftlab_workload::{ReadOptions, TraceError, TraceFormat, TraceReader};
use proptest::prelude::*;

/// (fixture, format)
const FIXTURES: &[(&str, &str)] = &[
    ("umass_header.csv", "umass"),
    ("msr.csv", "msr"),
    ("systor.csv", "systor"),
    ("blkparse.txt", "blkparse"),
    ("blkparse.txt", "blkparse-dispatch"),
    ("disksim.trace", "disksim"),
    ("mqsim.trace", "mqsim"),
    ("ssdsim.ascii", "ssdsim"),
];

/// Tokens that break careless number and field parsing.
const HOSTILE: &[&str] = &[
    "",
    " ",
    "-1",
    "-0",
    "0",
    "1e309",
    "NaN",
    "inf",
    "0x10",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999.5",
    "4294967296",
    "1.",
    ".5",
    "+",
    "R",
    "W",
    "Read",
    "WS",
    "D",
    "\u{0}",
    "é",
    ",",
    "9223372036854775807.999999999",
];

fn cases() -> u32 {
    std::env::var("FTLAB_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256)
}

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/")).join(name);
    std::fs::read(path).unwrap()
}

/// One mutation of a text trace.
#[derive(Debug, Clone)]
enum Mutation {
    /// Field `field` of line `line` becomes `HOSTILE[token]`.
    Field { line: usize, field: usize, token: usize },
    /// Line `line` is cut after `at` bytes.
    Cut { line: usize, at: usize },
    /// `bytes` are spliced into line `line` at byte `at`.
    Splice { line: usize, at: usize, bytes: Vec<u8> },
    /// Line `line` is repeated `times` times.
    Repeat { line: usize, times: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (0..64usize, 0..8usize, 0..HOSTILE.len()).prop_map(|(line, field, token)| Mutation::Field { line, field, token }),
        1 => (0..64usize, 0..80usize).prop_map(|(line, at)| Mutation::Cut { line, at }),
        1 => (0..64usize, 0..80usize, proptest::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(line, at, bytes)| Mutation::Splice { line, at, bytes }),
        1 => (0..64usize, 2..5usize).prop_map(|(line, times)| Mutation::Repeat { line, times }),
    ]
}

/// `text` with `mutations` applied, line by line.
fn mutate(text: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = text.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    for m in mutations {
        let n = lines.len();
        match m {
            Mutation::Field { line, field, token } => {
                let l = &mut lines[line % n];
                let sep = if l.contains(&b',') { b',' } else { b' ' };
                let mut fields: Vec<Vec<u8>> = l.split(|&b| b == sep).map(<[u8]>::to_vec).collect();
                let f = field % fields.len();
                fields[f] = HOSTILE[*token].as_bytes().to_vec();
                *l = fields.join(&sep);
            }
            Mutation::Cut { line, at } => {
                let l = &mut lines[line % n];
                l.truncate(*at);
            }
            Mutation::Splice { line, at, bytes } => {
                let l = &mut lines[line % n];
                let at = (*at).min(l.len());
                l.splice(at..at, bytes.iter().copied());
            }
            Mutation::Repeat { line, times } => {
                let l = lines[line % n].clone();
                for _ in 1..*times {
                    lines.insert(line % n, l.clone());
                }
            }
        }
    }
    lines.join(&b'\n')
}

/// Reads `input` as `format` to the end; checks what a reader promises.
fn read_all(input: Vec<u8>, format: &str, skip_bad_lines: bool) {
    let format: TraceFormat = format.parse().unwrap();
    let lines = input.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let opts = ReadOptions { skip_bad_lines };
    let reader = match TraceReader::from_reader("fuzzed.trace", std::io::Cursor::new(input), format, &opts) {
        Ok(r) => r,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let mut items = 0u64;
    for item in reader {
        items += 1;
        assert!(items <= lines + 1, "the reader yields more items than the input has lines");
        match item {
            Ok(r) => {
                assert!(r.len > 0, "a request of 0 bytes: {r:?}");
                assert!(r.offset.checked_add(u64::from(r.len)).is_some(), "a request ending past 2^64: {r:?}");
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains("fuzzed.trace"), "an error that does not name the input: {msg}");
                let bad_line = matches!(e, TraceError::Malformed { .. } | TraceError::ZeroLength { .. });
                assert!(!(skip_bad_lines && bad_line), "skip_bad_lines returned a bad line: {msg}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn mutated_fixtures_never_panic(
        which in 0..FIXTURES.len(),
        mutations in proptest::collection::vec(mutation(), 1..6),
        skip in any::<bool>(),
    ) {
        let (name, format) = FIXTURES[which];
        read_all(mutate(&fixture(name), &mutations), format, skip);
    }

    #[test]
    fn random_bytes_never_panic(
        which in 0..FIXTURES.len(),
        input in proptest::collection::vec(any::<u8>(), 0..600),
        skip in any::<bool>(),
    ) {
        read_all(input, FIXTURES[which].1, skip);
    }

    #[test]
    fn random_text_lines_never_panic(
        which in 0..FIXTURES.len(),
        lines in proptest::collection::vec(proptest::collection::vec(0..HOSTILE.len(), 1..9), 1..12),
        sep in prop_oneof![Just(","), Just(" "), Just("\t")],
        skip in any::<bool>(),
    ) {
        let text: Vec<String> = lines.iter().map(|l| l.iter().map(|&t| HOSTILE[t]).collect::<Vec<_>>().join(sep)).collect();
        read_all(text.join("\n").into_bytes(), FIXTURES[which].1, skip);
    }
}

/// Found by fuzzing: an MSR line whose Offset is 2^64 - 1 gave a request ending
/// past 2^64 bytes. It is a malformed line now.
#[test]
fn a_request_ending_past_2_64_bytes_is_a_malformed_line() {
    let line = "128166372003061629,hm,0,Write,18446744073709551615,4096,1331\n";
    let mut r = TraceReader::from_reader(
        "end.csv",
        std::io::Cursor::new(line),
        "msr".parse().unwrap(),
        &ReadOptions::default(),
    )
    .unwrap();
    let err = r.next().unwrap().unwrap_err();
    assert!(matches!(err, TraceError::Malformed { line: 1, .. }), "{err}");
    assert!(err.to_string().contains("fits in 2^64 bytes"), "{err}");
}

/// MQSim lines read by the fast path of plain integers are held to the same
/// checks as the general parser's: an end past 2^64 bytes, a size of zero,
/// CRLF line ends and extra blanks.
#[test]
fn plain_mqsim_lines_are_checked_as_others() {
    let read = |text: &'static str| {
        let mut r = TraceReader::from_reader(
            "plain.trace",
            std::io::Cursor::new(text),
            "mqsim".parse().unwrap(),
            &ReadOptions::default(),
        )
        .unwrap();
        r.next().unwrap()
    };
    let err = read("0 0 36028797018963967 16 0\n").unwrap_err();
    assert!(err.to_string().contains("fits in 2^64 bytes"), "{err}");
    assert!(matches!(read("5 0 8 0 1\n").unwrap_err(), TraceError::ZeroLength { line: 1, .. }));
    let req = read(" 5\t0 8 16  1 \r\n").unwrap();
    assert_eq!((req.arrival_ns, req.offset, req.len, req.op), (5, 4096, 8192, ftlab_workload::Op::Read));
}
