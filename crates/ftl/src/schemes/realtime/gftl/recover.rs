//! GFTL's startup after an abrupt shutdown (002 Section VI): the block map, the
//! write-queue map and the GC queue rebuilt from a scan of every OOB area; and the
//! invariants the tests check against the medium.

use ftlab_nand::BlockId;

use super::{Gftl, GftlConfig, Job, NONE};
use crate::blockmap::{reclaim_into, scan_device, tag, BlockScan};
use crate::{Flash, FtlError, Io};

impl Gftl {
    /// Rebuilds GFTL from the medium. Queue blocks are those whose pages carry the
    /// queue tag. Per logical block, a cleaning target without its end copy is
    /// dropped (the cleaning had not switched the map; its sources are intact) and
    /// the newest remaining data block is the mapped one; older ones are stale.
    /// Each logical page's newest copy wins (a cleaning copies the newest data, so
    /// sequence order is data order); one in a queue block becomes a queue-map
    /// entry. Queue blocks with no entry are erased; the newest partly written one
    /// is reopened as the queue's tail.
    pub fn recover(config: GftlConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut f = Self::empty(config, io)?;
        let ppb = f.ppb();
        let n = f.map.len() as u32;
        let (used, erased) = scan_device(io)?;
        f.free.extend(erased);
        let mut data: Vec<Option<BlockScan>> = vec![None; n as usize];
        let mut queue = Vec::new();
        let mut stale = Vec::new();
        for s in used {
            let lb = s.first().lpn / ppb;
            if s.first_tagged(tag::QUEUE) {
                queue.push(s);
            } else if s.incomplete_merge() || lb >= n {
                stale.push(s.block);
            } else {
                let slot = &mut data[lb as usize];
                match slot {
                    Some(cur) if cur.first_seq() > s.first_seq() => stale.push(s.block),
                    _ => {
                        if let Some(old) = slot.replace(s) {
                            stale.push(old.block);
                        }
                    }
                }
            }
        }
        for b in stale {
            reclaim_into(io, b, &mut f.free)?;
        }
        // Newest copy of each logical page: (seq, ppa, in a queue block).
        let mut newest: Vec<(u64, u32, bool)> = vec![(0, NONE, false); f.logical_pages_usize()];
        let mut consider = |s: &BlockScan, queued: bool| {
            for p in &s.pages {
                let lpn = p.lpn as usize;
                if lpn < newest.len() && p.seq > newest[lpn].0 {
                    newest[lpn] = (p.seq, f.geometry.ppa(s.block, p.page).0, queued);
                }
            }
        };
        for s in data.iter().flatten() {
            consider(s, false);
        }
        for s in &queue {
            consider(s, true);
        }
        for (lb, s) in data.iter().enumerate() {
            if let Some(s) = s {
                f.map[lb] = s.block.0;
                f.index[lb] = s.programmed as u16;
            }
        }
        for (lpn, &(seq, ppa, queued)) in newest.iter().enumerate() {
            if seq == 0 {
                continue;
            }
            f.present.set(lpn, true);
            if queued {
                let ppa = ftlab_nand::Ppa(ppa);
                f.wq_map.insert(lpn as u32, ppa);
                f.wq_count[lpn / ppb as usize] += 1;
                f.wq_live[f.geometry.block_of(ppa).0 as usize] += 1;
            }
        }
        queue.sort_by_key(BlockScan::last_seq);
        let tail = queue.iter().rposition(|s| s.programmed < ppb && f.wq_live[s.block.0 as usize] > 0);
        for (i, s) in queue.iter().enumerate() {
            let b = s.block;
            if f.wq_live[b.0 as usize] == 0 {
                reclaim_into(io, b, &mut f.free)?;
                continue;
            }
            f.is_queue[b.0 as usize] = true;
            f.wq_blocks += 1;
            if Some(i) == tail {
                f.wq_open = Some((b, s.programmed));
            }
        }
        // The GC queue: every block with queued pages, the least recently written
        // first.
        let mut jobs: Vec<(u64, u32)> = (0..n)
            .filter(|&lb| f.wq_count[lb as usize] > 0)
            .map(|lb| (data[lb as usize].as_ref().map_or(0, BlockScan::last_seq), lb))
            .collect();
        jobs.sort_unstable();
        for (_, lb) in jobs {
            f.enqueue(lb);
        }
        Ok(f)
    }

    fn logical_pages_usize(&self) -> usize {
        self.map.len() * self.ppb() as usize
    }
}

/// GFTL's invariants against the medium.
pub(super) fn check(f: &Gftl, flash: &Flash) -> Result<(), String> {
    let g = &f.geometry;
    let nand = flash.nand();
    let ppb = g.pages_per_block;
    let mut owner = vec![NONE; g.total_blocks() as usize];
    let cleaning = f.cleaning.as_deref();
    for (lb, &b) in f.map.iter().enumerate() {
        if b == NONE {
            continue;
        }
        if owner[b as usize] != NONE || f.is_queue[b as usize] {
            return Err(format!("block {b} of logical block {lb} is used twice"));
        }
        owner[b as usize] = lb as u32;
        let next = u32::from(f.index[lb]);
        // A block gone bad counts as full.
        let full = nand.is_grown_bad(BlockId(b)) && next == ppb;
        if nand.programmed_pages(BlockId(b)) != next && !full {
            return Err(format!("block {b}: write pointer {next}, medium says {}", nand.programmed_pages(BlockId(b))));
        }
        for page in 0..next {
            if let Some(oob) = nand.peek_oob(g.ppa(BlockId(b), page)) {
                if oob.tag & tag::QUEUE != 0 || oob.lpn / ppb != lb as u32 {
                    return Err(format!("block {b} of logical block {lb} holds {oob:?}"));
                }
            }
        }
        let held = cleaning.is_some_and(|c| c.lb == lb as u32);
        if f.wq_count[lb] > 0 && !f.in_gcq[lb] && !held {
            return Err(format!("logical block {lb} has queued pages but is not in the GC queue"));
        }
    }
    let mut live = vec![0u32; g.total_blocks() as usize];
    let mut count = vec![0u16; f.map.len()];
    for (&lpn, &ppa) in &f.wq_map {
        let b = g.block_of(ppa);
        if !f.is_queue[b.0 as usize] {
            return Err(format!("queued lpn {lpn} is in block {}, not a queue block", b.0));
        }
        match nand.peek_oob(ppa) {
            Some(oob) if oob.lpn == lpn && oob.tag == tag::QUEUE => {}
            other => return Err(format!("queued lpn {lpn} at {ppa:?} has OOB {other:?}")),
        }
        live[b.0 as usize] += 1;
        count[(lpn / ppb) as usize] += 1;
    }
    if live != f.wq_live || count != f.wq_count {
        return Err("write-queue live counts disagree with the write-queue map".into());
    }
    let queue_blocks = f.is_queue.iter().filter(|&&q| q).count() as u32;
    if queue_blocks != f.wq_blocks || f.wq_blocks > f.sizing.write_queue_blocks {
        return Err(format!(
            "{queue_blocks} queue blocks marked, {} counted, {} allowed",
            f.wq_blocks, f.sizing.write_queue_blocks
        ));
    }
    if let Some((b, next)) = f.wq_open {
        if !f.is_queue[b.0 as usize] || f.wq_blocks == 0 {
            return Err(format!("open queue block {} is not a counted queue block", b.0));
        }
        if next == 0 || next >= ppb || nand.programmed_pages(b) != next {
            return Err(format!(
                "open queue block {}: next page {next}, medium says {}",
                b.0,
                nand.programmed_pages(b)
            ));
        }
    }
    let mut erasing = vec![false; g.total_blocks() as usize];
    for job in &f.gcq {
        if let Job::Queue(b) = *job {
            let i = b.0 as usize;
            if std::mem::replace(&mut erasing[i], true)
                || !f.is_queue[i]
                || f.wq_live[i] != 0
                || f.wq_open.is_some_and(|(o, _)| o == b)
            {
                return Err(format!("queue block {} is queued for erase but is not a closed dead queue block", b.0));
            }
        }
    }
    for &b in &f.free {
        if owner[b.0 as usize] != NONE || f.is_queue[b.0 as usize] || nand.programmed_pages(b) != 0 {
            return Err(format!("free block {} is in use", b.0));
        }
    }
    Ok(())
}
