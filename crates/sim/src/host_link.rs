//! The host interface's own costs: the link that carries data between host and
//! device, and the controller's firmware time per command.
//!
//! Without it (the default) a command reaches the FTL the moment it is
//! dispatched and completes when its flash work does, as if the host link and
//! the controller were infinitely fast. A real board is not: 003 Section 2.2
//! measures the OpenSSD Jasmine at 90 MB/s of writes and 125 MB/s of reads
//! although its eight banks could program and read far faster, because every
//! byte crosses the SATA link and every command passes the controller's
//! embedded processor.
//!
//! The model, in the order a command meets it:
//!
//! 1. **Firmware** (`device.command_overhead_us`): the controller takes commands
//!    one at a time, in dispatch order, and spends a fixed time on each before
//!    its flash work can start.
//! 2. **Write data in** (`device.host_mb_per_s`, or `device.host_write_mb_per_s`
//!    where writes have a rate of their own, as the Jasmine board's 90 MB/s of
//!    writes against 125 MB/s of reads): a write's bytes cross the link before
//!    the FTL sees them; the link carries one transfer at a time (half-duplex,
//!    as SATA is), in the order transfers are reserved.
//! 3. **Read data out**: a read's bytes cross the link once its flash work is
//!    done; the command completes when the last byte is out.
//!
//! A write is handed to the FTL when its data is in the device, so the flash
//! work of every command starts no earlier than its dispatch, and the times
//! commands reach the FTL never go backwards.

use ftlab_ftl::ConfigError;

/// A host link and controller (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostLink {
    /// Link transfer time per byte, in picoseconds (0: no link cost).
    ps_per_byte: u64,
    /// Transfer time per byte of write data, picoseconds (`ps_per_byte` unless
    /// writes have a rate of their own).
    write_ps_per_byte: u64,
    /// Firmware time per command, ns.
    overhead_ns: u64,
    /// When the link is next free, ns.
    link_free: u64,
    /// When the controller is next free, ns.
    cpu_free: u64,
}

impl HostLink {
    /// A link of `mb_per_s` (10^6 bytes a second; `None`: free) and a firmware
    /// time of `overhead_us` per command (`None`: none); `None` if both are
    /// unset. Errors name the key.
    pub fn new(mb_per_s: Option<f64>, overhead_us: Option<f64>) -> Result<Option<HostLink>, ConfigError> {
        if mb_per_s.is_none() && overhead_us.is_none() {
            return Ok(None);
        }
        let ps_per_byte = match mb_per_s {
            None => 0,
            Some(r) => ftlab_ftl::dram::ps_per_byte(r).map_err(|e| {
                ConfigError::new(
                    "device.host_mb_per_s",
                    format!("device.host_mb_per_s {e}; leave it out for a link without cost"),
                )
            })?,
        };
        let overhead_ns = match overhead_us {
            None => 0,
            Some(us) if us.is_finite() && (0.0..=1e6).contains(&us) => (us * 1e3).round() as u64,
            Some(us) => {
                return Err(ConfigError::new(
                    "device.command_overhead_us",
                    format!("device.command_overhead_us must be between 0 and 1,000,000 us, got {us}"),
                ))
            }
        };
        Ok(Some(HostLink { ps_per_byte, write_ps_per_byte: ps_per_byte, overhead_ns, link_free: 0, cpu_free: 0 }))
    }

    /// Write data crosses the link at `mb_per_s` (10^6 bytes a second) instead
    /// of the link's rate; `None` leaves it at the link's rate. Errors name
    /// `device.host_write_mb_per_s`.
    pub fn with_write_rate(mut self, mb_per_s: Option<f64>) -> Result<HostLink, ConfigError> {
        if let Some(r) = mb_per_s {
            self.write_ps_per_byte = ftlab_ftl::dram::ps_per_byte(r).map_err(|e| {
                ConfigError::new(
                    "device.host_write_mb_per_s",
                    format!("device.host_write_mb_per_s {e}; leave it out for writes at device.host_mb_per_s"),
                )
            })?;
        }
        Ok(self)
    }

    /// Time to move `bytes` over the link, ns (rounded up).
    #[inline]
    fn transfer_ns(&self, bytes: u64) -> u64 {
        (bytes * self.ps_per_byte).div_ceil(1000)
    }

    /// A command dispatched at `at` carrying `bytes_in` bytes to the device
    /// (a write's data; 0 for others): when its flash work may start.
    pub fn start(&mut self, at: u64, bytes_in: u64) -> u64 {
        let mut t = at.max(self.cpu_free) + self.overhead_ns;
        if bytes_in > 0 {
            t = t.max(self.link_free) + (bytes_in * self.write_ps_per_byte).div_ceil(1000);
            self.link_free = t;
        }
        self.cpu_free = t;
        t
    }

    /// A command whose flash work is done at `done` and that returns
    /// `bytes_out` bytes to the host (a read's data): when it completes.
    pub fn finish(&mut self, done: u64, bytes_out: u64) -> u64 {
        if bytes_out == 0 {
            return done;
        }
        let t = done.max(self.link_free) + self.transfer_ns(bytes_out);
        self.link_free = t;
        t
    }

    /// Forgets queued work (a power cut: the link and controller restart idle).
    pub fn reset(&mut self, at: u64) {
        self.link_free = at;
        self.cpu_free = at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_is_no_link_and_bad_rates_name_their_key() {
        assert_eq!(HostLink::new(None, None).unwrap(), None);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = HostLink::new(Some(bad), None).unwrap_err().to_string();
            assert!(e.contains("device.host_mb_per_s"), "{e}");
        }
        let e = HostLink::new(None, Some(-3.0)).unwrap_err().to_string();
        assert!(e.contains("device.command_overhead_us"), "{e}");
    }

    #[test]
    fn writes_wait_for_their_data_and_reads_for_the_link() {
        // 100 MB/s: 10 ns a byte; 4 KiB takes 40.96 us.
        let mut l = HostLink::new(Some(100.0), Some(5.0)).unwrap().unwrap();
        // A write at 0: firmware 5 us, then 40,960 ns of data.
        assert_eq!(l.start(0, 4096), 5_000 + 40_960);
        // A second write at 0 waits for the controller, which waited for the link.
        assert_eq!(l.start(0, 4096), 45_960 + 5_000 + 40_960);
        // A read dispatched at 0 starts after the controller is free.
        let s = l.start(0, 0);
        assert_eq!(s, 91_920 + 5_000);
        // Its data goes out once its flash work is done and the link is free.
        assert_eq!(l.finish(s + 100_000, 4096), s + 100_000 + 40_960);
        // A read done earlier still queues behind the link.
        let link = s + 100_000 + 40_960;
        assert_eq!(l.finish(s, 512), link + 5_120);
    }

    #[test]
    fn the_link_caps_bandwidth() {
        // 90 MB/s: back-to-back 32 KiB writes arrive no faster than the link.
        let mut l = HostLink::new(Some(90.0), None).unwrap().unwrap();
        let mut t = 0;
        for _ in 0..1000 {
            t = l.start(0, 32768);
        }
        let mb_per_s = 1000.0 * 32768.0 / t as f64 * 1e3;
        assert!((mb_per_s - 90.0).abs() < 0.1, "{mb_per_s}");
    }

    #[test]
    fn writes_may_cross_at_a_rate_of_their_own() {
        // 125 MB/s of reads, 90 of writes: 4,096 bytes in at 11,111 ps a byte
        // (45,511 ns), out at 8,000 (32,768 ns).
        let mut l = HostLink::new(Some(125.0), None).unwrap().unwrap().with_write_rate(Some(90.0)).unwrap();
        assert_eq!(l.start(0, 4096), 45_511);
        assert_eq!(l.finish(45_511, 4096), 45_511 + 32_768);
        let same = HostLink::new(Some(125.0), None).unwrap().unwrap();
        assert_eq!(same.clone().with_write_rate(None).unwrap(), same);
        let err = same.with_write_rate(Some(0.0)).unwrap_err().to_string();
        assert!(err.contains("device.host_write_mb_per_s"), "{err}");
    }
}
