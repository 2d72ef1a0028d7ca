//! A write-back buffer in device RAM in front of any FTL.
//!
//! Host writes land in the buffer and are acknowledged at once; the buffer
//! writes them to the FTL behind it (in logical-page order) when it is full, on
//! [`Ftl::flush`] and in idle time ([`Ftl::background`]). Reads of buffered pages
//! are served from RAM. Its durability is [`Durability::OnFlush`]: a power cut
//! loses what was buffered, and only writes completed before a completed flush
//! are sure to survive.
//!
//! Copies between host and buffer take DRAM time when a rate is set
//! (`device.dram_mb_per_s`): each page written into the buffer or read from
//! it is one copy, copies run one at a time, and the command completes no
//! earlier than its copy. Without a rate they take none (the buffer then models
//! where data is, not DRAM timing).
//!
//! Set through the device configuration (`device.write_buffer_pages`), over any
//! FTL that speaks block commands only (a cache's or a Nameless-Write device's
//! own commands would pass the buffer by: refused); it is a [`Layer`], so the
//! FTL behind keeps its own name, counters, recovery, real-time guarantee and
//! admission, and placement (a buffered page touches no die).

use std::collections::BTreeMap;

use ftlab_nand::{Payload, SimTime};

use crate::dram::Dram;
use crate::layer::{Layer, Layered};
use crate::{check_lpn, Durability, Extension, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn};

/// Builds a [`WriteBuffer`] of `pages` pages over the FTL `inner` builds.
#[derive(Debug)]
pub struct WriteBufferBuilder {
    /// The FTL behind the buffer.
    pub inner: Box<dyn FtlBuilder + Send + Sync>,
    /// Pages the buffer holds (at least 1).
    pub pages: usize,
    /// DRAM copy time per byte, picoseconds (0: copies are free).
    pub dram_ps_per_byte: u64,
}

impl WriteBufferBuilder {
    /// A buffer of `pages` pages over what `inner` builds, copies free.
    pub fn new(inner: Box<dyn FtlBuilder + Send + Sync>, pages: usize) -> Self {
        WriteBufferBuilder { inner, pages, dram_ps_per_byte: 0 }
    }

    /// Copies at `mb_per_s` (10^6 bytes a second); errors name
    /// `device.dram_mb_per_s`.
    pub fn with_dram(mut self, mb_per_s: f64) -> Result<Self, FtlError> {
        self.dram_ps_per_byte = crate::dram::ps_per_byte(mb_per_s)
            .map_err(|e| FtlError::config("device.dram_mb_per_s", format!("device.dram_mb_per_s {e}")))?;
        Ok(self)
    }
}

impl FtlBuilder for WriteBufferBuilder {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Layered(WriteBuffer::new(self.inner.format(io)?, self.pages, io)?.dram(self.dram_ps_per_byte))))
    }

    /// The buffer was in RAM: it comes back empty over the recovered FTL.
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Layered(WriteBuffer::new(self.inner.recover(io)?, self.pages, io)?.dram(self.dram_ps_per_byte))))
    }
}

/// A write-back buffer of whole logical pages over `inner` (see the module
/// docs).
#[derive(Debug)]
pub struct WriteBuffer {
    inner: Box<dyn Ftl>,
    pages: BTreeMap<u32, (Payload, Hint)>,
    capacity: usize,
    page_size: u64,
    /// When the pages written out so far are durable (the completion of the
    /// last drain): a flush completes no earlier.
    drained_until: SimTime,
    /// Copies between host and buffer.
    dram: Dram,
}

impl WriteBuffer {
    /// A buffer of `capacity` pages over `inner`.
    pub fn new(mut inner: Box<dyn Ftl>, capacity: usize, io: &Io) -> Result<Self, FtlError> {
        if capacity == 0 {
            return Err(FtlError::config(
                "device.write_buffer_pages",
                "device.write_buffer_pages = 0 is no buffer: leave it out, or give it at least 1 page",
            ));
        }
        let extension = inner.extension().name();
        if extension != Extension::None.name() {
            return Err(FtlError::config(
                "device.write_buffer_pages",
                format!(
                    "{} speaks {extension} commands, which would pass the write buffer by and read \
                     around the pages it holds: leave device.write_buffer_pages out for it",
                    inner.name()
                ),
            ));
        }
        if capacity as u64 > u64::from(inner.logical_pages()) {
            return Err(FtlError::config(
                "device.write_buffer_pages",
                format!(
                    "device.write_buffer_pages = {capacity} is more than the {} logical pages {} exports: \
                     a buffer that holds the whole device never writes to flash; give a smaller one",
                    inner.logical_pages(),
                    inner.name()
                ),
            ));
        }
        let page_size = u64::from(inner.unit_bytes().unwrap_or(io.geometry().page_size));
        Ok(WriteBuffer {
            inner,
            pages: BTreeMap::new(),
            capacity,
            page_size,
            drained_until: SimTime::ZERO,
            dram: Dram::default(),
        })
    }

    /// The same buffer with DRAM copies of `ps_per_byte` picoseconds a byte.
    pub fn dram(mut self, ps_per_byte: u64) -> Self {
        self.dram = Dram::new(ps_per_byte);
        self
    }

    /// One page copied between host and buffer, starting no earlier than the
    /// command and the previous copy: the command completes no earlier than
    /// its end.
    fn copy(&mut self, io: &mut Io) {
        if let Some(end) = self.dram.copy(io.now(), self.page_size) {
            io.complete_after(end);
        }
    }

    /// Writes every buffered page to the FTL behind, in logical-page order. On a
    /// failure the pages not written stay buffered.
    fn drain(&mut self, io: &mut Io) -> Result<(), FtlError> {
        if self.pages.is_empty() {
            return Ok(());
        }
        while let Some((lpn, (data, hint))) = self.pages.pop_first() {
            if let Err(e) = self.inner.write(io, Lpn(lpn), data.clone(), &hint) {
                self.pages.insert(lpn, (data, hint));
                return Err(e);
            }
        }
        self.drained_until = self.drained_until.max(io.completion());
        Ok(())
    }

    /// Pages buffered now.
    pub fn buffered(&self) -> usize {
        self.pages.len()
    }
}

impl Layer for WriteBuffer {
    type Inner = dyn Ftl;

    fn inner(&self) -> &(dyn Ftl + 'static) {
        &*self.inner
    }

    fn inner_mut(&mut self) -> &mut (dyn Ftl + 'static) {
        &mut *self.inner
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        check_lpn(lpn, self.inner.addressable_pages())?;
        match self.pages.get(&lpn.0) {
            Some((data, _)) => {
                let data = data.clone();
                self.copy(io);
                Ok(Some(data))
            }
            None => self.inner.read(io, lpn),
        }
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        check_lpn(lpn, self.inner.addressable_pages())?;
        if !self.pages.contains_key(&lpn.0) && self.pages.len() >= self.capacity {
            self.drain(io)?;
        }
        self.pages.insert(lpn.0, (data, *hint));
        io.ack();
        self.copy(io);
        Ok(())
    }

    fn trim(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        check_lpn(lpn, self.inner.addressable_pages())?;
        self.pages.remove(&lpn.0);
        self.inner.trim(io, lpn)
    }

    /// Writes the buffer out and completes once everything written out so far is
    /// durable (pages written out earlier may still be in flight).
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        self.drain(io)?;
        self.inner.flush(io)?;
        io.complete_after(self.drained_until);
        Ok(())
    }

    /// Writes the buffer out in idle time, then lets the FTL behind work.
    fn background(&mut self, io: &mut Io, until: SimTime) -> Result<(), FtlError> {
        self.drain(io)?;
        self.inner.background(io, until)
    }

    fn durability(&self) -> Durability {
        Durability::OnFlush
    }

    fn own_ram_bytes(&self) -> u64 {
        self.capacity as u64 * (self.page_size + 8)
    }

    fn holds(&self, lpn: Lpn) -> bool {
        self.pages.contains_key(&lpn.0)
    }

    fn takes_writes(&self) -> bool {
        true
    }
}
