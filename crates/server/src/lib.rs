//! ftlab's block-device server: any FTL on the simulated device, exported over
//! the Network Block Device protocol (the NBD project's `doc/proto.md`), so real
//! clients (fio's `nbd` engine, `qemu-img`, `nbdcopy`, `nbd-client`, a file
//! system over `nbdfuse`) drive it with real data.
//!
//! - [`Server`] holds one or more named [`Export`]s, each one
//!   [`Device`](ftlab_sim::device::Device) shared by the connections to it;
//! - [`Listener`] binds `unix:PATH` or `tcp:HOST:PORT` ([`Listen`]);
//! - the handshake is fixed newstyle with `NO_ZEROES`, and the options
//!   `EXPORT_NAME`, `GO`, `INFO` (export size and flags, block sizes: minimum
//!   512, preferred the flash page, maximum [`MAX_PAYLOAD`]), `LIST` and
//!   `ABORT`, and `STARTTLS` with [`Server::with_tls`] ([`Tls`]: offered or
//!   required, client certificates optional); any other option is answered
//!   `NBD_REP_ERR_UNSUP`;
//! - transmission takes `READ`, `WRITE`, `FLUSH`, `TRIM`, `WRITE_ZEROES`
//!   (`NO_HOLE` writes zeroes instead of trimming) and `DISC`, with `FUA`;
//!   several requests are in flight at once and replies (simple replies) go
//!   out in the order the device completes them, in simulated time;
//! - errors carry NBD's codes: `EINVAL` for misaligned, out-of-range (reads,
//!   trims) and oversized requests and unknown commands or flags, `ENOSPC` for
//!   writes past the end and a full device, `EIO` for a lost power or a failed
//!   medium, `ENOTSUP` for what the FTL cannot do.
//!
//! Power and persistence: [`ExportOptions::cut_after`] cuts the power once
//! after N commands, [`Server::cut_power`] (SIGUSR1 in `ftlab serve`) whenever
//! it is called; each export recovers with its FTL's own recovery and commands
//! in flight fail with `EIO`; when a cut lost writes acknowledged into a
//! write-back cache and not yet flushed, the next `FLUSH` on each connection
//! open at the cut fails with `EIO` ([`Export::losses`]). An export made
//! [`Export::with_image`] keeps its device image durable: every successful
//! `FLUSH` and `FUA` write is synced to the image's journal before it is
//! acknowledged, so a crash of the server loses nothing flushed; the image is
//! locked against a second server, and saved whole by [`Server::save_images`]
//! once [`Server::serve`] has returned (every connection drained). Its device
//! is opened from the image (and journal) with
//! [`Device::open_image`](ftlab_sim::device::Device::open_image).
//!
//! Time: without pacing ([`ExportOptions::pace`]) the device runs in simulated
//! time as fast as the host serves it, and its counters report simulated
//! response times; with pacing each reply waits until its simulated completion
//! time comes on the wall clock (scaled), so a client's own latency figures
//! show the FTL's. See the crate's README for what fio's numbers mean in each
//! mode.
//!
//! ```no_run
//! use ftlab_server::{Export, ExportOptions, Listen, Listener, Server};
//! use ftlab_sim::{device::Device, RunConfig};
//!
//! let config = RunConfig::from_toml("[device]\nchip = \"small-slc\"\n[ftl]\nkind = \"pagemap\"\n", "example")?;
//! let export = Export::new("pagemap", Device::open(&config)?, ExportOptions::default());
//! let server = Server::new(vec![export])?;
//! let listener = Listener::bind(&"unix:/tmp/ftlab.sock".parse::<Listen>()?)?;
//! server.serve(&listener)?; // until server.stop() from another thread
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod export;
mod handshake;
mod listen;
pub mod proto;
mod server;
mod session;
mod tls;

pub use error::ServerError;
pub use export::{Export, ExportOptions, ExportStats, MAX_PAYLOAD};
pub use listen::{Listen, Listener};
pub use server::{Limits, Server};
pub use session::nbd_error;
pub use tls::Tls;
