//! The ZNS device against a reference model of ZNS 1.1 (with TP 4076's
//! Zone Random Write Area) written apart from it: random zone commands,
//! each result (its status or the data read) compared, shrunk by
//! proptest to a shortest failing sequence.

use std::collections::{BTreeMap, VecDeque};

use ftlab_ftl::conformance::small_geometry;
use ftlab_ftl::conformance_zoned::ZonedHarness;
use ftlab_ftl::zns::{ZnsConfig, ZoneAction, ZoneState, ZoneStatus, ZrwaLimits};
use ftlab_ftl::FtlError;
use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Cmd {
    Append(u32),
    /// A write at the write pointer plus the offset (0: at it).
    Write(u32, u32),
    Manage(u32, ZoneAction),
    /// An explicit ZRWA flush of this many pages from the write pointer.
    FlushZrwa(u32, u32),
    Read(u32, u32),
}

/// ZNS 1.1 as the specification states it, for `zones` zones of
/// `cap` pages with the limits, and ZRWAs if `zrwa`.
struct Model {
    state: Vec<ZoneState>,
    /// Committed pages (0 for a hole a ZRWA flush committed).
    data: Vec<Vec<u64>>,
    /// Each zone's ZRWA, if allocated: its pages.
    buf: Vec<Option<BTreeMap<u32, u64>>>,
    cap: u32,
    max_open: u32,
    max_active: u32,
    zrwa: Option<ZrwaLimits>,
    implicit: VecDeque<u32>,
}

impl Model {
    fn count(&self, f: impl Fn(ZoneState) -> bool) -> u32 {
        self.state.iter().filter(|&&s| f(s)).count() as u32
    }
    fn set(&mut self, z: u32, s: ZoneState) {
        self.implicit.retain(|&i| i != z);
        if s == ZoneState::ImplicitlyOpened {
            self.implicit.push_back(z);
        }
        self.state[z as usize] = s;
    }
    /// Takes an open resource (and an active one for an empty or full
    /// zone) for `z`, closing the oldest implicitly opened zone if it must.
    fn open(&mut self, z: u32, to: ZoneState) -> Result<(), ZoneStatus> {
        let s = self.state[z as usize];
        if !s.is_active() && self.count(ZoneState::is_active) >= self.max_active {
            return Err(ZoneStatus::TooManyActive);
        }
        if !s.is_open() && self.count(ZoneState::is_open) >= self.max_open {
            let victim = self.implicit.front().copied().ok_or(ZoneStatus::TooManyOpen)?;
            self.set(victim, ZoneState::Closed);
        }
        self.set(z, to);
        Ok(())
    }
    /// Moves `n` pages of `z`'s ZRWA to its committed data; full at the
    /// capacity (the ZRWA freed).
    fn commit(&mut self, z: u32, n: u32) {
        let zi = z as usize;
        for _ in 0..n {
            let i = self.data[zi].len() as u32;
            let v = self.buf[zi].as_mut().and_then(|b| b.remove(&i)).unwrap_or(0);
            self.data[zi].push(v);
        }
        if self.data[zi].len() as u32 >= self.cap {
            self.buf[zi] = None;
            self.set(z, ZoneState::Full);
        }
    }
    fn write(&mut self, z: u32, at: u32, token: u64) -> Result<u32, ZoneStatus> {
        use ZoneState::*;
        match self.state[z as usize] {
            Full => return Err(ZoneStatus::Full),
            ReadOnly => return Err(ZoneStatus::ReadOnly),
            Offline => return Err(ZoneStatus::Offline),
            _ => {}
        }
        let wp = self.data[z as usize].len() as u32;
        if at >= self.cap {
            return Err(ZoneStatus::Boundary);
        }
        if let (Some(_), Some(r)) = (&self.buf[z as usize], self.zrwa) {
            // In a ZRWA: anywhere below twice its size past the pointer;
            // past the ZRWA, the pointer moves by whole granules first.
            if at < wp || at >= wp + 2 * r.size {
                return Err(ZoneStatus::InvalidWrite);
            }
            if !self.state[z as usize].is_open() {
                self.open(z, ImplicitlyOpened)?;
            }
            if at >= wp + r.size {
                let n = (at + 1 - wp - r.size).div_ceil(r.flush_granularity) * r.flush_granularity;
                self.commit(z, n);
            }
            if let Some(b) = self.buf[z as usize].as_mut() {
                b.insert(at, token);
            }
            return Ok(at);
        }
        if at != wp {
            return Err(ZoneStatus::InvalidWrite);
        }
        if !self.state[z as usize].is_open() {
            self.open(z, ImplicitlyOpened)?;
        }
        self.data[z as usize].push(token);
        if wp + 1 == self.cap {
            self.set(z, Full);
        }
        Ok(wp)
    }
    fn append(&mut self, z: u32, token: u64) -> Result<u32, ZoneStatus> {
        let s = self.state[z as usize];
        if self.buf[z as usize].is_some() && !matches!(s, ZoneState::ReadOnly | ZoneState::Offline) {
            return Err(ZoneStatus::InvalidZoneOperation);
        }
        self.write(z, self.data[z as usize].len() as u32, token)
    }
    fn flush_zrwa(&mut self, z: u32, pages: u32) -> Result<(), ZoneStatus> {
        use ZoneState::*;
        let Some(r) = self.zrwa else { return Err(ZoneStatus::InvalidZoneOperation) };
        let s = self.state[z as usize];
        match s {
            ReadOnly => return Err(ZoneStatus::ReadOnly),
            Offline => return Err(ZoneStatus::Offline),
            _ if self.buf[z as usize].is_none() => return Err(ZoneStatus::InvalidField),
            Full => return Err(ZoneStatus::Full),
            _ => {}
        }
        let wp = self.data[z as usize].len() as u32;
        if pages == 0 || pages > r.size || wp + pages > self.cap {
            return Err(ZoneStatus::Boundary);
        }
        if !pages.is_multiple_of(r.flush_granularity) && wp + pages != self.cap {
            return Err(ZoneStatus::InvalidField);
        }
        if !s.is_open() {
            self.open(z, ImplicitlyOpened)?;
        }
        self.commit(z, pages);
        Ok(())
    }
    fn manage(&mut self, z: u32, a: ZoneAction) -> Result<(), ZoneStatus> {
        use ZoneState::*;
        let s = self.state[z as usize];
        let has = self.buf[z as usize].is_some();
        match (a, s) {
            (ZoneAction::OpenZrwa, _) if self.zrwa.is_none() => return Err(ZoneStatus::InvalidZoneOperation),
            (ZoneAction::Offline, ReadOnly) => {
                self.buf[z as usize] = None;
                self.set(z, Offline)
            }
            (ZoneAction::Offline, Offline) => {}
            (_, ReadOnly) => return Err(ZoneStatus::ReadOnly),
            (_, Offline) => return Err(ZoneStatus::Offline),
            (ZoneAction::OpenZrwa, ExplicitlyOpened) if has => {}
            (ZoneAction::OpenZrwa, Empty | ImplicitlyOpened | ExplicitlyOpened | Closed) => {
                let r = self.zrwa.unwrap();
                if !has {
                    let taken = self.buf.iter().filter(|b| b.is_some()).count() as u32;
                    if !(self.data[z as usize].len() as u32).is_multiple_of(r.flush_granularity) || taken >= r.max_zones
                    {
                        return Err(ZoneStatus::ZrwaUnavailable);
                    }
                }
                self.open(z, ExplicitlyOpened)?;
                if !has {
                    self.buf[z as usize] = Some(BTreeMap::new());
                }
            }
            (ZoneAction::Open, ExplicitlyOpened) => {}
            (ZoneAction::Open, Empty | ImplicitlyOpened | Closed) => self.open(z, ExplicitlyOpened)?,
            (ZoneAction::Close, Closed) => {}
            (ZoneAction::Close, ImplicitlyOpened | ExplicitlyOpened) => {
                let to = if self.data[z as usize].is_empty() && !has { Empty } else { Closed };
                self.set(z, to);
            }
            (ZoneAction::Finish, Full) => {}
            (ZoneAction::Finish, Empty | ImplicitlyOpened | ExplicitlyOpened | Closed) => {
                // A finish commits the ZRWA up to its last page written.
                let wp = self.data[z as usize].len() as u32;
                let end = self.buf[z as usize].as_ref().and_then(|b| b.keys().max().map(|&i| i + 1));
                self.commit(z, end.unwrap_or(wp).max(wp) - wp);
                self.buf[z as usize] = None;
                self.set(z, Full);
            }
            (ZoneAction::Reset, Empty) => {}
            (ZoneAction::Reset, ImplicitlyOpened | ExplicitlyOpened | Closed | Full) => {
                self.data[z as usize].clear();
                self.buf[z as usize] = None;
                self.set(z, Empty);
            }
            _ => return Err(ZoneStatus::InvalidTransition),
        }
        Ok(())
    }
    fn read(&self, z: u32, i: u32) -> Result<Option<u64>, ZoneStatus> {
        if self.state[z as usize] == ZoneState::Offline {
            return Err(ZoneStatus::Offline);
        }
        Ok(self.data[z as usize]
            .get(i as usize)
            .copied()
            .or_else(|| self.buf[z as usize].as_ref().and_then(|b| b.get(&i).copied())))
    }
}

fn status<T>(r: Result<T, FtlError>) -> Result<T, ZoneStatus> {
    r.map_err(|e| match e {
        FtlError::Zone(z) => z.status,
        e => panic!("not a zone error: {e}"),
    })
}

fn cmds(zones: u32) -> impl Strategy<Value = Vec<Cmd>> {
    let action = prop_oneof![
        Just(ZoneAction::Open),
        Just(ZoneAction::Close),
        Just(ZoneAction::Finish),
        Just(ZoneAction::Reset),
        Just(ZoneAction::Offline),
        Just(ZoneAction::OpenZrwa),
    ];
    let offset = prop_oneof![3 => Just(0u32), 1 => 1..4u32, 2 => 0..12u32];
    let cmd = prop_oneof![
        6 => (0..zones).prop_map(Cmd::Append),
        3 => (0..zones, offset).prop_map(|(z, o)| Cmd::Write(z, o)),
        2 => (0..zones, action).prop_map(|(z, a)| Cmd::Manage(z, a)),
        1 => (0..zones, 0..7u32).prop_map(|(z, p)| Cmd::FlushZrwa(z, p)),
        2 => (0..zones, 0..40u32).prop_map(|(z, i)| Cmd::Read(z, i)),
    ];
    proptest::collection::vec(cmd, 1..300)
}

fn check(config: ZnsConfig, cmds: &[Cmd]) {
    let mut h = ZonedHarness::new(&config, small_geometry(), 1);
    let zones = h.zoned().zones().min(6);
    let cap = h.zoned().zone_capacity();
    let (max_open, max_active) = (h.zoned().max_open(), h.zoned().max_active());
    let limit = |l: u32| if l == 0 { u32::MAX } else { l };
    let all = h.zoned().zones();
    let mut m = Model {
        state: vec![ZoneState::Empty; all as usize],
        data: vec![Vec::new(); all as usize],
        buf: vec![None; all as usize],
        cap,
        max_open: limit(max_open),
        max_active: limit(max_active),
        zrwa: h.zoned().zrwa(),
        implicit: VecDeque::new(),
    };
    for (n, &c) in cmds.iter().enumerate() {
        let c = match c {
            Cmd::Append(z) | Cmd::Write(z, _) | Cmd::Manage(z, _) | Cmd::FlushZrwa(z, _) | Cmd::Read(z, _)
                if z >= zones =>
            {
                continue
            }
            c => c,
        };
        match c {
            Cmd::Append(z) => {
                let got = status(h.append(z)).map(|(lpn, token, _)| (lpn.0 - h.start(z), token));
                let want = got.as_ref().map_or(0, |g| g.1);
                assert_eq!(got.map(|g| g.0), m.append(z, want), "command {n}: {c:?}");
            }
            Cmd::Write(z, off) => {
                let at = (m.data[z as usize].len() as u32 + off).min(h.zoned().zone_size() - 1);
                let lpn = h.start(z) + at;
                let got = status(h.write(lpn)).map(|(token, _)| token);
                let want = m.write(z, at, *got.as_ref().unwrap_or(&0)).map(|_| ());
                assert_eq!(got.map(|_| ()), want, "command {n}: {c:?}");
            }
            Cmd::Manage(z, a) => {
                assert_eq!(status(h.manage(z, a)).map(|_| ()), m.manage(z, a), "command {n}: {c:?}");
            }
            Cmd::FlushZrwa(z, pages) => {
                let upto = h.start(z) + m.data[z as usize].len() as u32 + pages;
                let got = status(h.manage(z, ZoneAction::FlushZrwa { upto })).map(|_| ());
                assert_eq!(got, m.flush_zrwa(z, pages), "command {n}: {c:?}");
            }
            Cmd::Read(z, i) => {
                let i = i.min(cap - 1);
                let lpn = h.start(z) + i;
                assert_eq!(status(h.read(lpn)), m.read(z, i), "command {n}: {c:?}");
            }
        }
        for z in 0..zones {
            let d = h.zoned().zone(z).unwrap();
            assert_eq!(d.state, m.state[z as usize], "after command {n} ({c:?}): zone {z}");
            assert_eq!(d.write_pointer - d.start, m.data[z as usize].len() as u32, "after command {n}: zone {z}");
            assert_eq!(d.zrwa, m.buf[z as usize].is_some(), "after command {n}: zone {z}'s ZRWA");
        }
        h.advance(50_000);
    }
    h.ftl.check_invariants(&h.flash).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_device_follows_the_reference_model(cmds in cmds(6)) {
        check(ZnsConfig { zone_capacity: 20, ..ZnsConfig::default() }, &cmds);
    }

    #[test]
    fn the_device_follows_the_reference_model_under_limits(cmds in cmds(6)) {
        let config = ZnsConfig {
            zone_capacity: 12,
            max_open_zones: 2,
            max_active_zones: 3,
            zone_mapping: ftlab_ftl::zns::ZoneMapping::Die,
            zone_blocks: 1,
            ..ZnsConfig::default()
        };
        check(config, &cmds);
    }

    #[test]
    fn the_device_follows_the_reference_model_with_zrwas(cmds in cmds(6)) {
        let config = ZnsConfig {
            zone_capacity: 18,
            zrwa_pages: 4,
            zrwa_flush_granularity: 2,
            max_zrwa_zones: 2,
            ..ZnsConfig::default()
        };
        check(config, &cmds);
    }

    #[test]
    fn the_device_follows_the_reference_model_with_zrwas_under_limits(cmds in cmds(6)) {
        let config = ZnsConfig {
            zone_capacity: 13,
            max_open_zones: 2,
            max_active_zones: 3,
            zone_mapping: ftlab_ftl::zns::ZoneMapping::Die,
            zone_blocks: 1,
            zrwa_pages: 3,
            zrwa_flush_granularity: 1,
            max_zrwa_zones: 2,
        };
        check(config, &cmds);
    }
}
