//! Line parsers, one per format. They borrow the line, allocate only to report an
//! error, and know nothing of files or line numbers.

use std::borrow::Cow;

use super::format::{BlkEvent, TraceFormat};
use crate::{HostRequest, Op};

/// Bytes per sector for every sector-addressed format.
const SECTOR: u64 = 512;
/// Longest excerpt of a bad line kept for an error message.
const MAX_FOUND: usize = 120;

/// What one line turned out to be.
#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    /// A request. For MSR, `arrival_ns` still holds raw 100-ns FILETIME ticks: the
    /// reader rebases them on the file's first record.
    Request(HostRequest),
    /// Nothing to return, silently (blank, comment, event of another kind, flush).
    Ignored,
    /// The line breaks the format.
    Bad { expected: Cow<'static, str>, found: String },
    /// A request of size 0.
    ZeroLength,
}

/// `s` shortened to at most [`MAX_FOUND`] bytes on a char boundary.
pub(crate) fn excerpt(s: &str) -> String {
    if s.len() <= MAX_FOUND {
        return s.to_owned();
    }
    let mut end = MAX_FOUND;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

fn bad(expected: impl Into<Cow<'static, str>>, found: &str) -> Line {
    Line::Bad { expected: expected.into(), found: excerpt(found) }
}

/// Parses `line` (already trimmed, non-empty, not a comment) in `format`.
pub(crate) fn parse_line(format: TraceFormat, line: &str) -> Line {
    let parsed = match format {
        TraceFormat::Umass => umass(line),
        TraceFormat::Msr => msr(line),
        TraceFormat::Systor => systor(line),
        TraceFormat::Blkparse { events } => return blkparse(line, events),
        TraceFormat::Disksim => disksim(line),
        TraceFormat::Mqsim | TraceFormat::Ssdsim => match mqsim_plain(line.as_bytes()) {
            Some(req) => Ok(req),
            None => mqsim(line),
        },
    };
    match parsed {
        Ok(req) if req.len == 0 => Line::ZeroLength,
        Ok(req) => Line::Request(req),
        Err(line) => line,
    }
}

/// `s` without leading and trailing whitespace, as `str::trim` (Unicode
/// White_Space), by the ASCII fast path when that settles it: `str::trim`
/// tests every end character as a Unicode code point, which was a tenth of the
/// time of parsing a trace.
#[inline]
pub(crate) fn trim(s: &str) -> &str {
    let t = s.trim_ascii();
    // Vertical tab and every non-ASCII byte may start or end Unicode White_Space
    // that trim_ascii keeps.
    let odd = |b: u8| b == 0x0b || b >= 0x80;
    match (t.as_bytes().first(), t.as_bytes().last()) {
        (Some(&a), Some(&z)) if odd(a) || odd(z) => t.trim(),
        _ => t,
    }
}

/// Exactly `N` fields (surrounding whitespace trimmed); trailing empty fields, as a
/// trailing comma makes, are tolerated.
fn split_exact<'a, const N: usize>(mut it: impl Iterator<Item = &'a str>) -> Option<[&'a str; N]> {
    let mut out = [""; N];
    for slot in out.iter_mut() {
        *slot = trim(it.next()?);
    }
    if it.any(|rest| !trim(rest).is_empty()) {
        return None;
    }
    Some(out)
}

/// `s` as a plain decimal integer: one or more ASCII digits and nothing else,
/// below 2^64. The fast path of every integer field (a trace of a million lines
/// parses some five million of them); anything else goes to `str::parse`.
#[inline]
fn plain_digits(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

fn int<T: std::str::FromStr + TryFrom<u64>>(field: &str, what: &'static str) -> Result<T, Line> {
    if let Some(v) = plain_digits(field).and_then(|v| T::try_from(v).ok()) {
        return Ok(v);
    }
    field.parse().map_err(|_| bad(format!("a non-negative integer {what}"), field))
}

/// `sectors * 512` as a byte offset.
fn sectors_to_offset(field: &str, what: &'static str) -> Result<u64, Line> {
    int::<u64>(field, what)?
        .checked_mul(SECTOR)
        .ok_or_else(|| bad(format!("{what} small enough to address in bytes (u64)"), field))
}

/// `sectors * 512` as a request length.
fn sectors_to_len(field: &str, what: &'static str) -> Result<u32, Line> {
    int::<u64>(field, what)?
        .checked_mul(SECTOR)
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| bad(format!("{what} below 4 GiB"), field))
}

fn bytes_len(field: &str, what: &'static str) -> Result<u32, Line> {
    let v: u64 = int(field, what)?;
    u32::try_from(v).map_err(|_| bad(format!("{what} below 4 GiB"), field))
}

/// A non-negative decimal number (`12`, `12.5`, `.5`, `1.5e-3`) times `10^scale`,
/// rounded half up. Plain decimals are converted digit by digit, exactly; only
/// exponent notation goes through `f64` (then rounded to the nearest integer).
pub(crate) fn decimal_scaled(s: &str, scale: u32) -> Option<u64> {
    if let (Some(v), Some(p)) = (plain_digits(s), 10u64.checked_pow(scale)) {
        return v.checked_mul(p);
    }
    let s = s.strip_prefix('+').unwrap_or(s);
    if s.bytes().any(|b| b == b'e' || b == b'E') {
        let f: f64 = s.parse().ok()?;
        let scaled = f * 10f64.powi(i32::try_from(scale).ok()?);
        // 1.8e19 is just below u64::MAX + 1; beyond it the cast would saturate silently.
        if !scaled.is_finite() || !(0.0..1.8e19).contains(&scaled) {
            return None;
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        return Some(scaled.round() as u64);
    }
    let (int_part, frac) = s.split_once('.').unwrap_or((s, ""));
    if int_part.is_empty() && frac.is_empty() {
        return None;
    }
    if !int_part.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut v: u64 = 0;
    let frac = frac.as_bytes();
    let digits = int_part.bytes().chain((0..scale as usize).map(|i| frac.get(i).copied().unwrap_or(b'0')));
    for d in digits {
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if frac.get(scale as usize).is_some_and(|&d| d >= b'5') {
        v = v.checked_add(1)?;
    }
    Some(v)
}

fn time(field: &str, scale: u32, unit: &'static str) -> Result<u64, Line> {
    decimal_scaled(field, scale).ok_or_else(|| {
        // A number too large for the ns clock is named as such, not as a bad number.
        if field.parse::<f64>().is_ok_and(|t| t >= 0.0) {
            bad(format!("a time in {unit} that fits the simulator's 64-bit ns clock (below 2^64 ns, 584 years)"), field)
        } else {
            bad(format!("a non-negative time in {unit}"), field)
        }
    })
}

fn umass(line: &str) -> Result<HostRequest, Line> {
    let [asu, lba, size, opcode, ts] = split_exact(line.split(','))
        .ok_or_else(|| bad("5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp)", line))?;
    let op = match opcode {
        "r" | "R" => Op::Read,
        "w" | "W" => Op::Write,
        _ => return Err(bad("Opcode r, R, w or W (field 4)", opcode)),
    };
    Ok(HostRequest {
        arrival_ns: time(ts, 9, "seconds (Timestamp, field 5)")?,
        op,
        offset: sectors_to_offset(lba, "LBA in sectors (field 2)")?,
        len: bytes_len(size, "Size in bytes (field 3)")?,
        device: int(asu, "ASU (field 1)")?,
    })
}

fn msr(line: &str) -> Result<HostRequest, Line> {
    let [ts, _host, disk, kind, offset, size, _response] = split_exact(line.split(',')).ok_or_else(|| {
        bad("7 comma-separated fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime)", line)
    })?;
    let op = if kind.eq_ignore_ascii_case("read") {
        Op::Read
    } else if kind.eq_ignore_ascii_case("write") {
        Op::Write
    } else {
        return Err(bad("Type Read or Write (field 4)", kind));
    };
    Ok(HostRequest {
        arrival_ns: int(ts, "Timestamp in 100-ns ticks (field 1)")?,
        op,
        offset: int(offset, "Offset in bytes (field 5)")?,
        len: bytes_len(size, "Size in bytes (field 6)")?,
        device: int(disk, "DiskNumber (field 3)")?,
    })
}

fn systor(line: &str) -> Result<HostRequest, Line> {
    let [ts, _response, kind, lun, offset, size] = split_exact(line.split(','))
        .ok_or_else(|| bad("6 comma-separated fields (Timestamp,Response,IOType,LUN,Offset,Size)", line))?;
    let op = match kind {
        "R" | "r" => Op::Read,
        "W" | "w" => Op::Write,
        _ if kind.eq_ignore_ascii_case("read") => Op::Read,
        _ if kind.eq_ignore_ascii_case("write") => Op::Write,
        _ => return Err(bad("IOType R or W (field 3)", kind)),
    };
    Ok(HostRequest {
        arrival_ns: time(ts, 9, "seconds (Timestamp, field 1)")?,
        op,
        offset: int(offset, "Offset in bytes (field 5)")?,
        len: bytes_len(size, "Size in bytes (field 6)")?,
        device: int(lun, "LUN (field 4)")?,
    })
}

fn disksim(line: &str) -> Result<HostRequest, Line> {
    let [ts, devno, blkno, size, flags] = split_exact(line.split_ascii_whitespace())
        .ok_or_else(|| bad("5 whitespace-separated fields (time_ms devno blkno size flags)", line))?;
    let flags: u64 = int(flags, "flags (field 5)")?;
    Ok(HostRequest {
        arrival_ns: time(ts, 6, "milliseconds (field 1)")?,
        op: if flags & 1 == 1 { Op::Read } else { Op::Write },
        offset: sectors_to_offset(blkno, "blkno in sectors (field 3)")?,
        len: sectors_to_len(size, "size in sectors (field 4)")?,
        device: int(devno, "devno (field 2)")?,
    })
}

fn mqsim(line: &str) -> Result<HostRequest, Line> {
    let [ts, dev, lba, size, op] = split_exact(line.split_ascii_whitespace())
        .ok_or_else(|| bad("5 whitespace-separated fields (time_ns device lba_sectors size_sectors op)", line))?;
    let op = match op {
        "1" => Op::Read,
        "0" => Op::Write,
        _ => return Err(bad("op 1 (read) or 0 (write) (field 5)", op)),
    };
    Ok(HostRequest {
        arrival_ns: time(ts, 0, "nanoseconds (field 1)")?,
        op,
        offset: sectors_to_offset(lba, "lba in sectors (field 3)")?,
        len: sectors_to_len(size, "size in sectors (field 4)")?,
        device: int(dev, "device (field 2)")?,
    })
}

/// The `N` fields of a line of plain unsigned integers (ASCII digits, each
/// below 2^64, separated by spaces or tabs), each with its number of digits;
/// `None` for any other line.
#[inline]
fn plain_fields<const N: usize>(line: &[u8]) -> Option<[(u64, usize); N]> {
    let (fields, end) = plain_fields_at(line)?;
    (end == line.len()).then_some(fields)
}

/// The `N` plain integer fields at the start of `text` as [`plain_fields`]
/// reads them, and the index after the separators that follow the last one: a
/// field's digits end at a separator, a line terminator (`\r`, `\n`) or the
/// end of `text`; `None` if a field is missing or holds another byte.
#[inline(always)]
fn plain_fields_at<const N: usize>(text: &[u8]) -> Option<([(u64, usize); N], usize)> {
    let sep = |b: u8| b == b' ' || b == b'\t';
    let n = text.len();
    let mut out = [(0, 0); N];
    let mut i = 0;
    for slot in &mut out {
        while i < n && sep(text[i]) {
            i += 1;
        }
        // One pass over the digits, wrapping; a field of more than 19 digits
        // (which may not fit a u64) is converted again, checked.
        let start = i;
        let mut v: u64 = 0;
        while i < n {
            let d = text[i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
            i += 1;
        }
        let digits = i - start;
        if digits == 0 || (i < n && !matches!(text[i], b' ' | b'\t' | b'\r' | b'\n')) {
            return None;
        }
        if digits > 19 {
            v = text[start..i].iter().try_fold(0u64, |v, &d| v.checked_mul(10)?.checked_add(u64::from(d - b'0')))?;
        }
        *slot = (v, digits);
    }
    while i < n && sep(text[i]) {
        i += 1;
    }
    Some((out, i))
}

/// The fast path of [`mqsim`]: a line of five plain integers whose values are
/// in range gives the request [`mqsim`] would; any other line gives `None`,
/// and [`mqsim`] decides (and words the error). Reading a trace was two
/// fifths of the instructions of a replay of a million requests.
#[inline]
pub(crate) fn mqsim_plain(line: &[u8]) -> Option<HostRequest> {
    mqsim_request(plain_fields::<5>(line)?)
}

/// [`mqsim_plain`] on the first line of `buf`, read where it lies (no copy,
/// no separate search for its end): the request and the length of the line
/// with its terminator (`\n` or `\r\n`). `None` if that line is not one
/// [`mqsim_plain`] takes or `buf` ends before its terminator; the caller then
/// reads the line the general way.
#[inline]
pub(crate) fn mqsim_plain_line(buf: &[u8]) -> Option<(HostRequest, usize)> {
    let (fields, end) = plain_fields_at::<5>(buf)?;
    let len = match buf[end..] {
        [b'\n', ..] => end + 1,
        [b'\r', b'\n', ..] => end + 2,
        _ => return None,
    };
    Some((mqsim_request(fields)?, len))
}

#[inline(always)]
fn mqsim_request(fields: [(u64, usize); 5]) -> Option<HostRequest> {
    let [(ts, _), (dev, _), (lba, _), (size, _), (op, op_digits)] = fields;
    let op = match (op, op_digits) {
        (1, 1) => Op::Read,
        (0, 1) => Op::Write,
        _ => return None,
    };
    Some(HostRequest {
        arrival_ns: ts,
        op,
        offset: lba.checked_mul(SECTOR)?,
        len: u32::try_from(size.checked_mul(SECTOR)?).ok()?,
        device: u32::try_from(dev).ok()?,
    })
}

/// `maj,min` as a Linux dev_t (`maj << 20 | min`), or `None` if `s` is not one.
fn blk_device(s: &str) -> Option<u32> {
    let (maj, min) = s.split_once(',')?;
    let maj: u32 = maj.parse().ok()?;
    let min: u32 = min.parse().ok()?;
    (maj < (1 << 12) && min < (1 << 20)).then_some(maj << 20 | min)
}

fn blkparse(line: &str, events: BlkEvent) -> Line {
    let mut tok = line.split_ascii_whitespace();
    // Summary lines ("CPU0 (8,16):", "Total (8,16):", " Reads Queued: ...") do not
    // start with a device and are not events.
    let Some(device) = tok.next().and_then(blk_device) else {
        return Line::Ignored;
    };
    let (Some(_cpu), Some(_seq), Some(ts), Some(_pid), Some(action)) =
        (tok.next(), tok.next(), tok.next(), tok.next(), tok.next())
    else {
        return Line::Ignored;
    };
    let wanted = match events {
        BlkEvent::Queue => "Q",
        BlkEvent::Dispatch => "D",
    };
    if action != wanted {
        return Line::Ignored;
    }
    let Some(rwbs) = tok.next() else {
        return bad("an RWBS field after the action", line);
    };
    let op = if rwbs.contains('D') {
        Op::Trim
    } else if rwbs.contains('W') {
        Op::Write
    } else if rwbs.contains('R') {
        Op::Read
    } else {
        return Line::Ignored; // no data direction: N, pure flush F
    };
    let sector = match tok.next() {
        Some(s) if !s.starts_with('[') => s,
        // A flush carrying no sectors is printed without `sector + n`.
        _ if rwbs.contains('F') => return Line::Ignored,
        _ => return bad("`sector + nsectors` after the RWBS field", line),
    };
    let (Some("+"), Some(nsectors)) = (tok.next(), tok.next()) else {
        return bad("`sector + nsectors` after the RWBS field", line);
    };
    let req = (|| {
        Ok::<_, Line>(HostRequest {
            arrival_ns: time(ts, 9, "seconds (field 4)")?,
            op,
            offset: sectors_to_offset(sector, "sector (field 8)")?,
            len: sectors_to_len(nsectors, "nsectors (field 10)")?,
            device,
        })
    })();
    match req {
        Ok(r) if r.len == 0 => Line::Ignored,
        Ok(r) => Line::Request(r),
        Err(e) => e,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn req(format: &str, line: &str) -> HostRequest {
        match parse_line(format.parse().unwrap(), line) {
            Line::Request(r) => r,
            other => panic!("{line:?}: {other:?}"),
        }
    }

    proptest::proptest! {
        /// MQSim's fast path gives the general parser's request or leaves the
        /// line to it: on lines of digits, separators and a few other bytes,
        /// and on five-field lines of any integers.
        #[test]
        fn mqsim_fast_path_agrees_with_the_general_parser(
            noise in "[0-9 \t.x+-]{0,40}",
            fields in proptest::collection::vec((0u64..=u64::MAX, 0usize..3, 1usize..3), 5),
            small in proptest::bool::ANY,
        ) {
            let line: String = fields
                .iter()
                .map(|&(v, zeros, gap)| {
                    let v = if small { v % 3 } else { v };
                    format!("{}{}{v}", if gap == 1 { " " } else { "\t " }, "0".repeat(zeros))
                })
                .collect();
            for text in [noise.trim(), line.trim()] {
                if text.is_empty() {
                    continue;
                }
                let general = mqsim(text);
                // Read in place from a buffer of lines, the first line gives
                // what it gives alone.
                for end in ["\n", "\r\n", " \n", "\t\r\n"] {
                    let buf = format!("{text}{end}9 9 9 9 9\n");
                    let in_place = mqsim_plain_line(buf.as_bytes());
                    proptest::prop_assert_eq!(in_place.map(|(r, _)| r), mqsim_plain(text.as_bytes()), "{:?}", buf);
                    if let Some((_, len)) = in_place {
                        proptest::prop_assert_eq!(len, text.len() + end.len());
                    }
                }
                match mqsim_plain(text.as_bytes()) {
                    Some(fast) => proptest::prop_assert_eq!(Ok(fast), general, "{:?}", text),
                    None => {
                        let plain = plain_fields::<5>(text.as_bytes());
                        let in_range = plain.is_some_and(|f| {
                            f[4].1 == 1 && f[4].0 <= 1 && f[2].0 <= u64::MAX / 512 && f[3].0 <= u64::from(u32::MAX) / 512
                                && f[1].0 <= u64::from(u32::MAX)
                        });
                        proptest::prop_assert!(!in_range, "{:?}: the fast path refused a plain line", text);
                    }
                }
            }
        }
    }

    #[test]
    fn mqsim_fast_path_takes_plain_lines_only() {
        assert!(mqsim_plain(b"10 0 16 8 0").is_some());
        assert!(mqsim_plain(b"10\t0  16 8 1").is_some());
        for refused in ["10 0 16 8 00", "10 0 16 8 2", "10 0 16 8", "10 0 16 8 0 1", "1.5 0 16 8 0", "10 0 16 8 0x"] {
            assert!(mqsim_plain(refused.as_bytes()).is_none(), "{refused}");
            assert!(mqsim_plain_line(format!("{refused}\n").as_bytes()).is_none(), "{refused}");
        }
        // In place: the first whole line only, and none without its terminator.
        let (r, len) = mqsim_plain_line(b"10 0 16 8 0\r\n11 0 16 8 1\n").unwrap();
        assert_eq!((r.arrival_ns, r.op, len), (10, Op::Write, 13));
        for cut in ["10 0 16 8 0", "10 0 16 8 0\r", "10 0 16 8 0 ", "10 0 16", "", "10 0 16 8 0\r\r\n"] {
            assert!(mqsim_plain_line(cut.as_bytes()).is_none(), "{cut:?}");
        }
        assert_eq!(
            req("mqsim", "10\t0  16 8 1"),
            HostRequest { arrival_ns: 10, op: Op::Read, offset: 8192, len: 4096, device: 0 }
        );
    }

    /// The fast paths agree with the standard library exactly.
    #[test]
    fn fast_trim_and_digits_agree_with_std() {
        let odd = ["", " ", "\u{b}", "\u{a0}", "\u{3000}", "\u{2028}", "\t", "\r\n", "x", "é", "\u{85}"];
        for a in odd {
            for b in odd {
                for mid in ["", "12", " 3 ", "a\u{a0}b", "\u{b}"] {
                    let s = format!("{a}{mid}{b}");
                    assert_eq!(trim(&s), s.trim(), "{s:?}");
                }
            }
        }
        for s in [
            "0",
            "007",
            "18446744073709551615",
            "18446744073709551616",
            "",
            "+1",
            "-1",
            "1 ",
            "1.5",
            "99999999999999999999",
        ] {
            assert_eq!(plain_digits(s), if s.starts_with('+') { None } else { s.parse::<u64>().ok() }, "{s:?}");
        }
        for (s, scale) in [("12", 9), ("18446744073", 9), ("18446744074", 9), ("0", 0), ("5", 6)] {
            let slow = |s: &str| {
                let v: u128 = s.parse::<u128>().ok()? * 10u128.pow(scale);
                u64::try_from(v).ok()
            };
            assert_eq!(decimal_scaled(s, scale), slow(s), "{s:?} x 10^{scale}");
        }
    }

    fn expected(format: &str, line: &str) -> String {
        match parse_line(format.parse().unwrap(), line) {
            Line::Bad { expected, .. } => expected.into_owned(),
            other => panic!("{line:?}: {other:?}"),
        }
    }

    #[test]
    fn decimal_is_exact_and_rounds_half_up() {
        assert_eq!(decimal_scaled("0.000000001", 9), Some(1));
        assert_eq!(decimal_scaled("1456095145.133076000", 9), Some(1_456_095_145_133_076_000));
        assert_eq!(decimal_scaled("5265.313", 6), Some(5_265_313_000));
        assert_eq!(decimal_scaled("0.1", 9), Some(100_000_000));
        assert_eq!(decimal_scaled(".25", 2), Some(25));
        assert_eq!(decimal_scaled("7.", 0), Some(7));
        assert_eq!(decimal_scaled("1.0000000005", 9), Some(1_000_000_001));
        assert_eq!(decimal_scaled("1.0000000004", 9), Some(1_000_000_000));
        assert_eq!(decimal_scaled("1.5e-3", 9), Some(1_500_000));
        assert_eq!(decimal_scaled("-1", 9), None);
        assert_eq!(decimal_scaled("1.2.3", 9), None);
        assert_eq!(decimal_scaled(".", 9), None);
        assert_eq!(decimal_scaled("", 9), None);
        assert_eq!(decimal_scaled("99999999999", 9), None, "overflows u64 ns");
    }

    #[test]
    fn umass_line() {
        let r = req("umass", "3,303567,3584,w,0.551706");
        assert_eq!(
            r,
            HostRequest { arrival_ns: 551_706_000, op: Op::Write, offset: 303_567 * 512, len: 3584, device: 3 }
        );
        assert_eq!(req("umass", "0,1,512,R,1").op, Op::Read);
        assert!(expected("umass", "1,2,3").contains("5 comma-separated fields"));
        assert!(expected("umass", "1,2,3,x,4").contains("Opcode"));
        assert!(expected("umass", "1,2,3,r,-4").contains("seconds"));
        let overflow = expected("umass", "1,2,3,r,18446744074");
        assert!(overflow.contains("fits the simulator's 64-bit ns clock"), "{overflow}");
        assert!(expected("mqsim", "18446744073709551616 0 0 8 0").contains("64-bit ns clock"));
        assert!(expected("disksim", "1e300 0 0 8 0").contains("64-bit ns clock"));
        assert_eq!(parse_line(TraceFormat::Umass, "1,2,0,r,4"), Line::ZeroLength);
        assert_eq!(req("umass", "1,2,512,r,4,").len, 512, "trailing comma tolerated");
    }

    #[test]
    fn msr_line_keeps_raw_ticks() {
        let r = req("msr", "128166385295514663,hm,2,Write,9056014336,2048,2833");
        assert_eq!(r.arrival_ns, 128_166_385_295_514_663);
        assert_eq!((r.op, r.offset, r.len, r.device), (Op::Write, 9_056_014_336, 2048, 2));
        assert_eq!(req("msr", "1,hm,0,read,0,512,1").op, Op::Read);
        assert!(expected("msr", "1,hm,0,Erase,0,512,1").contains("Read or Write"));
    }

    #[test]
    fn systor_line() {
        let r = req("systor", "1456095145.133076000,0.000806000,R,3,899056122368,131072");
        assert_eq!(r.arrival_ns, 1_456_095_145_133_076_000);
        assert_eq!((r.op, r.offset, r.len, r.device), (Op::Read, 899_056_122_368, 131_072, 3));
        assert_eq!(req("systor", "1.5,,W,0,0,4096").op, Op::Write, "empty Response is fine");
    }

    #[test]
    fn disksim_mqsim_ssdsim_lines() {
        let r = req("disksim", "5265.313 0 6357144 8 0");
        assert_eq!(
            r,
            HostRequest { arrival_ns: 5_265_313_000, op: Op::Write, offset: 6_357_144 * 512, len: 4096, device: 0 }
        );
        assert_eq!(req("disksim", "1 0 0 8 3").op, Op::Read, "bit 0 of the flags");
        assert_eq!(req("disksim", "1 0 0 8 2").op, Op::Write);
        let r = req("mqsim", "11413000 1 657728 16 1");
        assert_eq!(
            r,
            HostRequest { arrival_ns: 11_413_000, op: Op::Read, offset: 657_728 * 512, len: 8192, device: 1 }
        );
        assert_eq!(req("ssdsim", "0\t1\t55590\t6\t0").op, Op::Write);
        assert!(expected("mqsim", "1 2 3 4 7").contains("op 1 (read) or 0 (write)"));
        assert!(expected("mqsim", "1 2 3 4").contains("5 whitespace-separated"));
        assert!(expected("mqsim", "1 2 3 99999999999 0").contains("below 4 GiB"));
        assert_eq!(parse_line(TraceFormat::Mqsim, "1 2 3 0 0"), Line::ZeroLength);
    }

    #[test]
    fn blkparse_lines() {
        let q = TraceFormat::Blkparse { events: BlkEvent::Queue };
        let d = TraceFormat::Blkparse { events: BlkEvent::Dispatch };
        let line = "  8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]";
        let Line::Request(r) = parse_line(q, line.trim()) else { panic!() };
        assert_eq!(
            r,
            HostRequest {
                arrival_ns: 1850,
                op: Op::Read,
                offset: 1_444_645_666 * 512,
                len: 256 * 512,
                device: 8 << 20 | 16
            }
        );
        assert_eq!(parse_line(d, line.trim()), Line::Ignored);
        let ws = "8,16 1 3 1.5 9 D WS 100 + 8 [jbd2]";
        assert!(matches!(parse_line(d, ws), Line::Request(r) if r.op == Op::Write && r.arrival_ns == 1_500_000_000));
        assert!(matches!(parse_line(q, "8,0 0 1 0.1 1 Q DS 8 + 8 [fstrim]"), Line::Request(r) if r.op == Op::Trim));
        for ignored in [
            "8,16 5 0 0.000012990 0 m N cfq18615S / insert_request",
            "8,16 5 4 0.000008750 18615 P N [java]",
            "8,0 0 9 0.2 1 Q FWS [kworker/0:1]",
            "8,0 0 9 0.2 1 Q WS 0 + 0 [kworker/0:1]",
            "CPU0 (8,16):",
            "Total (8,16):",
            "Reads Queued: 80, 320KiB Writes Queued: 15444, 71MiB",
        ] {
            assert_eq!(parse_line(q, ignored), Line::Ignored, "{ignored}");
        }
        assert!(expected("blkparse", "8,0 0 1 0.1 1 Q W 8 - 8 [x]").contains("sector + nsectors"));
        assert!(expected("blkparse", "8,0 0 1 0.1 1 Q W 8 + x [x]").contains("nsectors"));
    }

    #[test]
    fn excerpt_is_bounded() {
        let long = "é".repeat(200);
        let e = excerpt(&long);
        assert!(e.len() <= MAX_FOUND + 3 && e.ends_with("..."));
    }
}
