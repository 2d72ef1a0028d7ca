//! The page format and the recovery order shared by the two map logs on flash:
//! the solid-state cache's (`ssc::log`, `consistency = "log"`) and the hybrid
//! schemes' ([`super::MapLog`], `map_persistence = "flash"`).
//!
//! A 32-byte header (little-endian): a 4-byte magic (one for log pages, one
//! for checkpoint pages, each log its own pair), the page's sequence number
//! (u64, one counter for both kinds, the log's own, not the OOB's), the number
//! of records (u32), a link (u64: for a log page the sequence number of the
//! log page before it, for a checkpoint the last log page before it), and for
//! a checkpoint the page's index and the checkpoint's page count (u32 each;
//! its pages have consecutive sequence numbers). Then 8-byte records.
//!
//! Recovery ([`select`]): the latest checkpoint whose pages are all readable,
//! then the log pages after it in sequence order, each naming the one before
//! it (a log page that does not follow on, e.g. one left after a torn page or
//! a torn checkpoint, is skipped).

use ftlab_nand::Payload;

/// Bytes of a metadata page's header.
pub(crate) const HEADER: usize = 32;
/// Bytes of a record.
pub(crate) const RECORD: usize = 8;

/// The magics of one log's log pages and checkpoint pages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Magic {
    pub log: [u8; 4],
    pub checkpoint: [u8; 4],
}

/// Records one metadata page of `page_size` bytes holds.
pub(crate) fn records_per_page(page_size: u32) -> usize {
    (page_size as usize).saturating_sub(HEADER) / RECORD
}

/// A metadata page, written or read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MetaPage {
    pub checkpoint: bool,
    pub seq: u64,
    pub link: u64,
    pub index: u32,
    pub total: u32,
    pub records: Vec<u64>,
}

/// The bytes of `page` (`page_size` long).
pub(crate) fn encode(page_size: u32, magic: Magic, page: &MetaPage) -> Payload {
    let mut b = vec![0u8; page_size as usize];
    b[0..4].copy_from_slice(if page.checkpoint { &magic.checkpoint } else { &magic.log });
    b[4..12].copy_from_slice(&page.seq.to_le_bytes());
    b[12..16].copy_from_slice(&(page.records.len() as u32).to_le_bytes());
    b[16..24].copy_from_slice(&page.link.to_le_bytes());
    b[24..28].copy_from_slice(&page.index.to_le_bytes());
    b[28..32].copy_from_slice(&page.total.to_le_bytes());
    for (i, r) in page.records.iter().enumerate() {
        b[HEADER + i * RECORD..HEADER + (i + 1) * RECORD].copy_from_slice(&r.to_le_bytes());
    }
    Payload::Bytes(b.into())
}

/// The page `payload` holds, if it is one of `magic`'s.
pub(crate) fn decode(magic: Magic, payload: &Payload) -> Option<MetaPage> {
    let Payload::Bytes(b) = payload else {
        return None;
    };
    let u32_at = |i: usize| b.get(i..i + 4).and_then(|s| s.try_into().ok()).map(u32::from_le_bytes);
    let u64_at = |i: usize| b.get(i..i + 8).and_then(|s| s.try_into().ok()).map(u64::from_le_bytes);
    let checkpoint = match b.get(0..4)? {
        m if m == magic.checkpoint => true,
        m if m == magic.log => false,
        _ => return None,
    };
    let n = u32_at(12)? as usize;
    let records = (0..n).map(|i| u64_at(HEADER + i * RECORD)).collect::<Option<Vec<u64>>>()?;
    Some(MetaPage { checkpoint, seq: u64_at(4)?, link: u64_at(16)?, index: u32_at(24)?, total: u32_at(28)?, records })
}

/// What recovery replays, as indices into the pages [`select`] sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Selection {
    /// The latest complete checkpoint's pages, in order (empty: none).
    pub checkpoint: Vec<usize>,
    /// The log pages after it that follow on, in order.
    pub log: Vec<usize>,
    /// The sequence number of the last log page replayed (or the checkpoint's
    /// link when none is).
    pub last_log: u64,
    /// The newest sequence number read (0: none).
    pub newest: u64,
}

/// Sorts `pages` by sequence number (dropping copies of one page) and picks
/// the latest complete checkpoint and the log after it.
pub(crate) fn select(pages: &mut Vec<MetaPage>) -> Selection {
    pages.sort_by_key(|p| (p.seq, !p.checkpoint));
    pages.dedup_by_key(|p| p.seq);
    let mut best: Option<(usize, u32, u64)> = None; // first page, total, link
    let mut run: Option<(usize, u64, u32, u32, u64)> = None; // first, start, total, seen, link
    for (i, p) in pages.iter().enumerate() {
        if !p.checkpoint {
            continue;
        }
        let start = p.seq.wrapping_sub(u64::from(p.index));
        run = match run {
            Some((f, s0, t, n, link)) if s0 == start && t == p.total && n == p.index => Some((f, s0, t, n + 1, link)),
            _ if p.index == 0 => Some((i, start, p.total, 1, p.link)),
            _ => None,
        };
        if let Some((f, _, t, n, link)) = run {
            if n == t {
                best = Some((f, t, link));
            }
        }
    }
    let mut sel = Selection { newest: pages.last().map_or(0, |p| p.seq), ..Selection::default() };
    let mut end = 0;
    if let Some((first, total, link)) = best {
        let start = pages[first].seq;
        end = start + u64::from(total);
        sel.checkpoint = (first..pages.len()).filter(|&i| pages[i].checkpoint && pages[i].seq < end).collect();
        sel.last_log = link;
    }
    for (i, p) in pages.iter().enumerate() {
        if !p.checkpoint && p.seq >= end && p.link == sel.last_log {
            sel.log.push(i);
            sel.last_log = p.seq;
        }
    }
    sel
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const M: Magic = Magic { log: *b"TSTL", checkpoint: *b"TSTC" };

    fn log(seq: u64, link: u64) -> MetaPage {
        MetaPage { checkpoint: false, seq, link, index: 0, total: 0, records: vec![seq] }
    }
    fn ckpt(seq: u64, link: u64, index: u32, total: u32) -> MetaPage {
        MetaPage { checkpoint: true, seq, link, index, total, records: vec![] }
    }

    #[test]
    fn round_trips_and_rejects_other_magics() {
        let p = MetaPage { checkpoint: true, seq: 7, link: 5, index: 1, total: 3, records: vec![1, u64::MAX] };
        let b = encode(128, M, &p);
        assert_eq!(decode(M, &b), Some(p));
        assert_eq!(decode(Magic { log: *b"XXXX", checkpoint: *b"YYYY" }, &b), None);
        assert_eq!(decode(M, &Payload::Token(3)), None);
    }

    #[test]
    fn a_torn_checkpoint_falls_back_to_the_one_before_and_the_log_is_chained() {
        // Checkpoint 1-2, log 3 and 4, a checkpoint 5-7 missing its page 6, log 8.
        let mut pages = vec![ckpt(1, 0, 0, 2), ckpt(2, 0, 1, 2), log(4, 3), log(3, 0), ckpt(5, 4, 0, 3)];
        pages.extend([ckpt(7, 4, 2, 3), log(8, 4)]);
        let s = select(&mut pages);
        let seqs = |v: &[usize]| v.iter().map(|&i| pages[i].seq).collect::<Vec<_>>();
        assert_eq!(seqs(&s.checkpoint), vec![1, 2]);
        // Log 8 names 4 as the one before it: it follows on.
        assert_eq!(seqs(&s.log), vec![3, 4, 8]);
        assert_eq!((s.last_log, s.newest), (8, 8));
        // Out of order (a page that does not follow on) is skipped.
        let mut pages = vec![ckpt(1, 0, 0, 1), log(2, 0), log(4, 3)];
        let s = select(&mut pages);
        assert_eq!(s.log.iter().map(|&i| pages[i].seq).collect::<Vec<_>>(), vec![2]);
    }
}
