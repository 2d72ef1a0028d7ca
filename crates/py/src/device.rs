//! `ftlab.Device`: the simulated SSD ([`ftlab_sim::device::Device`]) with
//! real bytes. `read`, `write`, ... submit a command at the device's clock
//! (or at a later `at`), serve it with the GIL released and return its
//! simulated completion time (ns); the clock moves to it. `submit_*` put
//! several commands in flight at once, and `step`, `step_until` and `wait`
//! collect their completions, as the Rust API does.

use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};

use ftlab_ftl::Durability;
use ftlab_nand::SimTime;
use ftlab_sim::device::{Command, Completion, Device as SimDevice, DeviceError as SimDeviceError, SECTOR};

use crate::config::Config;
use crate::errors::{self, DeviceError};
use crate::value::to_py;

/// A simulated SSD with the `[device]` and `[ftl]` of a `Config` (its
/// workload is not used), keeping real bytes.
///
/// Offsets and lengths are bytes, multiples of the 512-byte sector; a write
/// smaller than a flash page is merged into the page (a read-modify-write).
/// Every command returns its simulated completion time in ns (`read` returns
/// `(data, time)`); failures raise `DeviceError` with `.errno`. To have
/// several commands in flight, `submit_read`, `submit_write`, ... return a
/// tag at once, and `step()`, `step_until(t)` and `wait(tag)` return their
/// `Completion`s.
#[pyclass(module = "ftlab", name = "Device")]
#[derive(Debug)]
pub struct Device {
    // The FTL inside is Send but not Sync: the mutex makes the device
    // shareable between Python threads, one command at a time.
    inner: Mutex<SimDevice>,
}

impl Device {
    fn lock(&self) -> MutexGuard<'_, SimDevice> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Submits `cmd` at `at` (default: the clock) and runs the clock to its
    /// completion; completions of commands submitted with `submit_*` stay to
    /// be collected by `step`.
    fn execute(&self, py: Python<'_>, cmd: Command, at: Option<u64>) -> PyResult<Completion> {
        let done = py.allow_threads(|| {
            let mut dev = self.lock();
            let at = at.map_or_else(|| dev.now(), SimTime);
            let tag = dev.submit(at, cmd)?;
            Ok(dev.wait(tag))
        });
        match done {
            Ok(Some(c)) => Ok(c),
            Ok(None) => Err(errors::Error::new_err("the device returned no completion for a submitted command")),
            Err(e) => Err(device_error(py, &e)),
        }
    }

    /// Submits `cmd` at `at` (default: the clock) without waiting; its tag.
    fn submit(&self, py: Python<'_>, cmd: Command, at: Option<u64>) -> PyResult<u64> {
        let tag = py.allow_threads(|| {
            let mut dev = self.lock();
            let at = at.map_or_else(|| dev.now(), SimTime);
            dev.submit(at, cmd)
        });
        tag.map_err(|e| device_error(py, &e))
    }

    /// The completion time of a finished command, or its error raised.
    fn completed(py: Python<'_>, c: Completion) -> PyResult<(u64, Option<Vec<u8>>)> {
        match c.result {
            Ok(reply) => Ok((c.completed.0, reply.data)),
            Err(e) => Err(device_error(py, &e)),
        }
    }
}

/// A device command's error as a DeviceError.
fn device_error(py: Python<'_>, e: &SimDeviceError) -> PyErr {
    errors::new::<DeviceError>(py, e.to_string(), e.kind(), None)
}

/// The bytes of a bytes-like value (bytes, bytearray, or anything `bytes()` takes).
fn bytes_of(data: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = data.downcast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = data.downcast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    let b = data.py().get_type::<PyBytes>().call1((data,))?;
    Ok(b.downcast::<PyBytes>()?.as_bytes().to_vec())
}

/// A command's completion, from `Device.step()`, `step_until()` or `wait()`:
/// its tag (what `submit_*` returned), the command's name, when it was
/// submitted and completed (ns), and what it returned: `data` for a read,
/// `error` (a `DeviceError`) when it failed. `result()` returns the data (None
/// but for reads) or raises the error.
#[pyclass(module = "ftlab", name = "Completion", frozen)]
#[derive(Debug)]
pub struct PyCompletion {
    #[pyo3(get)]
    tag: u64,
    #[pyo3(get)]
    command: &'static str,
    #[pyo3(get)]
    submitted: u64,
    #[pyo3(get)]
    completed: u64,
    #[pyo3(get)]
    data: Option<Py<PyBytes>>,
    #[pyo3(get)]
    error: Option<PyObject>,
}

impl PyCompletion {
    fn of(py: Python<'_>, c: Completion) -> PyCompletion {
        let (data, error) = match c.result {
            Ok(reply) => (reply.data.map(|d| PyBytes::new(py, &d).unbind()), None),
            Err(e) => (None, Some(device_error(py, &e).into_value(py).into_any())),
        };
        PyCompletion { tag: c.tag, command: c.command, submitted: c.submitted.0, completed: c.completed.0, data, error }
    }
}

#[pymethods]
impl PyCompletion {
    /// Its response time, ns.
    #[getter]
    fn latency_ns(&self) -> u64 {
        self.completed.saturating_sub(self.submitted)
    }

    /// The data a read returned (None for other commands), or the command's
    /// `DeviceError` raised.
    fn result(&self, py: Python<'_>) -> PyResult<Option<Py<PyBytes>>> {
        match &self.error {
            Some(e) => Err(PyErr::from_value(e.bind(py).clone())),
            None => Ok(self.data.as_ref().map(|d| d.clone_ref(py))),
        }
    }

    fn __repr__(&self) -> String {
        let outcome = if self.error.is_some() { "error" } else { "ok" };
        format!(
            "<ftlab.Completion tag={} {} submitted={} completed={} {}>",
            self.tag, self.command, self.submitted, self.completed, outcome
        )
    }
}

#[pymethods]
impl Device {
    /// Opens a formatted device as `config` describes it.
    #[new]
    fn new(py: Python<'_>, config: &Config) -> PyResult<Self> {
        let config = config.run_config(py)?;
        let dev = py.allow_threads(|| SimDevice::open(&config)).map_err(|e| errors::sim(py, e))?;
        Ok(Device { inner: Mutex::new(dev) })
    }

    /// Writes `data` (bytes-like) at byte `offset`; with `fua` it completes only
    /// once durable. Returns the completion time, ns.
    #[pyo3(signature = (offset, data, *, fua = false, at = None))]
    fn write(&self, py: Python<'_>, offset: u64, data: &Bound<'_, PyAny>, fua: bool, at: Option<u64>) -> PyResult<u64> {
        let data = bytes_of(data)?;
        let c = self.execute(py, Command::Write { offset, data, fua }, at)?;
        Ok(Device::completed(py, c)?.0)
    }

    /// Reads `length` bytes at byte `offset`: `(data, completion time in ns)`.
    /// Pages never written, or trimmed, read as zeroes.
    #[pyo3(signature = (offset, length, *, at = None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        offset: u64,
        length: u64,
        at: Option<u64>,
    ) -> PyResult<(Bound<'py, PyBytes>, u64)> {
        let c = self.execute(py, Command::Read { offset, len: length }, at)?;
        let (t, data) = Device::completed(py, c)?;
        Ok((PyBytes::new(py, data.as_deref().unwrap_or_default()), t))
    }

    /// Discards `length` bytes at `offset` (advisory: whole pages only, and an
    /// FTL without trim keeps the data). Returns the completion time, ns.
    #[pyo3(signature = (offset, length, *, at = None))]
    fn trim(&self, py: Python<'_>, offset: u64, length: u64, at: Option<u64>) -> PyResult<u64> {
        let c = self.execute(py, Command::Trim { offset, len: length }, at)?;
        Ok(Device::completed(py, c)?.0)
    }

    /// Writes zeroes over `length` bytes at `offset`. Returns the completion time, ns.
    #[pyo3(signature = (offset, length, *, fua = false, at = None))]
    fn write_zeroes(&self, py: Python<'_>, offset: u64, length: u64, fua: bool, at: Option<u64>) -> PyResult<u64> {
        let c = self.execute(py, Command::WriteZeroes { offset, len: length, fua, may_trim: false }, at)?;
        Ok(Device::completed(py, c)?.0)
    }

    /// The zone report of a zoned device (`ftl.kind = "zns"`): one dict a
    /// zone, with `zone`, `start`, `capacity` and `write_pointer` in bytes
    /// and `state` (`empty`, `implicitly-opened`, `explicitly-opened`,
    /// `closed`, `full`, `read-only`, `offline`). A device that is not zoned
    /// raises an unsupported DeviceError.
    fn zones<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, pyo3::types::PyDict>>> {
        let (report, page) = py.allow_threads(|| {
            let mut dev = self.lock();
            let page = dev.page_size();
            (dev.zone_report(), page)
        });
        let report = report.map_err(|e| device_error(py, &e))?;
        report
            .into_iter()
            .enumerate()
            .map(|(z, d)| {
                let out = pyo3::types::PyDict::new(py);
                out.set_item("zone", z)?;
                out.set_item("start", u64::from(d.start) * page)?;
                out.set_item("capacity", u64::from(d.capacity) * page)?;
                out.set_item("write_pointer", u64::from(d.write_pointer) * page)?;
                let state = serde_json::to_value(d.state).ok().and_then(|v| v.as_str().map(str::to_owned));
                out.set_item("state", state.unwrap_or_default())?;
                out.set_item("zrwa", d.zrwa)?;
                Ok(out)
            })
            .collect()
    }

    /// Zone Append of `data` (whole pages, bytes-like) to `zone`: written at
    /// the zone's write pointer. Returns `(offset of its first byte,
    /// completion time in ns)`.
    #[pyo3(signature = (zone, data, *, at = None))]
    fn zone_append(&self, py: Python<'_>, zone: u32, data: &Bound<'_, PyAny>, at: Option<u64>) -> PyResult<(u64, u64)> {
        let data = bytes_of(data)?;
        let done = py.allow_threads(|| {
            let mut dev = self.lock();
            let at = at.map_or_else(|| dev.now(), SimTime);
            dev.zone_append(at, zone, &data)
        });
        done.map(|(offset, t)| (offset, t.0)).map_err(|e| device_error(py, &e))
    }

    /// Zone Management Send: `action` (`open`, `close`, `finish`, `reset`,
    /// `offline`, or on a device with Zone Random Write Areas `open-zrwa` and
    /// `flush-zrwa`) on `zone`. `flush-zrwa` takes `upto`, the byte offset
    /// (a multiple of the page size) the zone's write pointer moves to: its
    /// ZRWA is committed below it. Returns the completion time, ns.
    #[pyo3(signature = (zone, action, *, upto = None, at = None))]
    fn zone_manage(
        &self,
        py: Python<'_>,
        zone: u32,
        action: &str,
        upto: Option<u64>,
        at: Option<u64>,
    ) -> PyResult<u64> {
        let bad = |m: String| Err(pyo3::exceptions::PyValueError::new_err(format!("zone_manage: {m}")));
        let action = match (action, upto) {
            ("open", None) => ftlab_ftl::ZoneAction::Open,
            ("close", None) => ftlab_ftl::ZoneAction::Close,
            ("finish", None) => ftlab_ftl::ZoneAction::Finish,
            ("reset", None) => ftlab_ftl::ZoneAction::Reset,
            ("offline", None) => ftlab_ftl::ZoneAction::Offline,
            ("open-zrwa", None) => ftlab_ftl::ZoneAction::OpenZrwa,
            ("flush-zrwa", Some(upto)) => {
                let page = self.lock().page_size();
                let pages = upto / page;
                if upto % page != 0 || pages > u64::from(u32::MAX) {
                    return bad(format!(
                        "flush-zrwa upto={upto} is not a page boundary: give a multiple of the page size ({page} bytes), \
                         the offset the write pointer moves to"
                    ));
                }
                ftlab_ftl::ZoneAction::FlushZrwa { upto: pages as u32 }
            }
            ("flush-zrwa", None) => {
                return bad("flush-zrwa needs upto=<byte offset the write pointer moves to>, a multiple of the page \
                            size within the zone's ZRWA"
                    .into())
            }
            ("open" | "close" | "finish" | "reset" | "offline" | "open-zrwa", Some(_)) => {
                return bad(format!("{action} takes no upto (only flush-zrwa does)"))
            }
            (other, _) => {
                return bad(format!(
                    "unknown action {other:?}; give open, close, finish, reset, offline, open-zrwa or flush-zrwa"
                ))
            }
        };
        let done = py.allow_threads(|| {
            let mut dev = self.lock();
            let at = at.map_or_else(|| dev.now(), SimTime);
            dev.zone_manage(at, zone, action)
        });
        done.map(|t| t.0).map_err(|e| device_error(py, &e))
    }

    /// Makes every completed write durable. Returns the completion time, ns.
    #[pyo3(signature = (*, at = None))]
    fn flush(&self, py: Python<'_>, at: Option<u64>) -> PyResult<u64> {
        let c = self.execute(py, Command::Flush, at)?;
        Ok(Device::completed(py, c)?.0)
    }

    /// Submits a read of `length` bytes at `offset` at `at` ns (default: the
    /// clock, which moves to `at`) without waiting for it: its tag. Several
    /// commands can be in flight; `step()` and `step_until()` deliver their
    /// completions in time order, `wait(tag)` one of them.
    #[pyo3(signature = (offset, length, *, at = None))]
    fn submit_read(&self, py: Python<'_>, offset: u64, length: u64, at: Option<u64>) -> PyResult<u64> {
        self.submit(py, Command::Read { offset, len: length }, at)
    }

    /// Submits a write of `data` at `offset` (as `submit_read`): its tag.
    #[pyo3(signature = (offset, data, *, fua = false, at = None))]
    fn submit_write(
        &self,
        py: Python<'_>,
        offset: u64,
        data: &Bound<'_, PyAny>,
        fua: bool,
        at: Option<u64>,
    ) -> PyResult<u64> {
        let data = bytes_of(data)?;
        self.submit(py, Command::Write { offset, data, fua }, at)
    }

    /// Submits a trim (as `submit_read`): its tag.
    #[pyo3(signature = (offset, length, *, at = None))]
    fn submit_trim(&self, py: Python<'_>, offset: u64, length: u64, at: Option<u64>) -> PyResult<u64> {
        self.submit(py, Command::Trim { offset, len: length }, at)
    }

    /// Submits a write of zeroes (as `submit_read`): its tag.
    #[pyo3(signature = (offset, length, *, fua = false, at = None))]
    fn submit_write_zeroes(
        &self,
        py: Python<'_>,
        offset: u64,
        length: u64,
        fua: bool,
        at: Option<u64>,
    ) -> PyResult<u64> {
        self.submit(py, Command::WriteZeroes { offset, len: length, fua, may_trim: false }, at)
    }

    /// Submits a flush (as `submit_read`): its tag. It makes durable the
    /// writes completed before it.
    #[pyo3(signature = (*, at = None))]
    fn submit_flush(&self, py: Python<'_>, at: Option<u64>) -> PyResult<u64> {
        self.submit(py, Command::Flush, at)
    }

    /// The next completion in time order (ties: submission order), moving the
    /// clock to it; None when nothing is in flight.
    fn step(&self, py: Python<'_>) -> Option<PyCompletion> {
        let c = py.allow_threads(|| self.lock().step());
        c.map(|c| PyCompletion::of(py, c))
    }

    /// Every completion at or before `t` ns, in time order, moving the clock
    /// to `t` (or keeping it, if later).
    fn step_until(&self, py: Python<'_>, t: u64) -> Vec<PyCompletion> {
        let done = py.allow_threads(|| self.lock().step_until(SimTime(t)));
        done.into_iter().map(|c| PyCompletion::of(py, c)).collect()
    }

    /// The completion of command `tag`, running the clock to it if later;
    /// the others stay for `step`. KeyError when `tag` is not in flight (never
    /// submitted, or already delivered).
    fn wait(&self, py: Python<'_>, tag: u64) -> PyResult<PyCompletion> {
        let c = py.allow_threads(|| self.lock().wait(tag));
        match c {
            Some(c) => Ok(PyCompletion::of(py, c)),
            None => Err(pyo3::exceptions::PyKeyError::new_err(format!(
                "command {tag} is not in flight: it was never submitted, or its completion was already delivered"
            ))),
        }
    }

    /// Commands submitted whose completion was not delivered yet.
    #[getter]
    fn in_flight(&self) -> usize {
        self.lock().in_flight()
    }

    /// When the next completion `step()` would deliver is due, ns; None when
    /// nothing is in flight.
    #[getter]
    fn next_completion(&self) -> Option<u64> {
        self.lock().next_completion().map(|t| t.0)
    }

    /// Cuts the power at `at` ns (default: the clock): what survives is the
    /// FTL's durability contract (`durability`). Commands raise DeviceError
    /// until `recover()`. Returns the time of the cut, ns.
    #[pyo3(signature = (at = None))]
    fn cut_power(&self, py: Python<'_>, at: Option<u64>) -> PyResult<u64> {
        let mut dev = self.lock();
        let at = at.map_or_else(|| dev.now(), SimTime);
        dev.cut_power(at).map_err(|e| device_error(py, &e))?;
        Ok(at.0)
    }

    /// Powers the device on and rebuilds the FTL from the flash (its scan takes
    /// simulated time). Returns the clock after recovery, ns.
    fn recover(&self, py: Python<'_>) -> PyResult<u64> {
        let done = py.allow_threads(|| {
            let mut dev = self.lock();
            dev.recover().map(|()| dev.now().0)
        });
        done.map_err(|e| device_error(py, &e))
    }

    /// Host-side counters since the device was opened (commands, bytes,
    /// read-modify-writes, WAF, erases, response times in µs), as a dict.
    fn counters(&self, py: Python<'_>) -> PyResult<PyObject> {
        let counters = self.lock().counters();
        to_py(py, &counters)
    }

    /// Bytes the host can address.
    #[getter]
    fn capacity(&self) -> u64 {
        self.lock().capacity()
    }

    /// The flash page size, bytes.
    #[getter]
    fn page_size(&self) -> u64 {
        self.lock().page_size()
    }

    /// The host's addressing unit, bytes (512).
    #[getter]
    fn sector(&self) -> u64 {
        SECTOR
    }

    /// The clock, ns: no command is served before it.
    #[getter]
    fn now(&self) -> u64 {
        self.lock().now().0
    }

    /// The FTL's name.
    #[getter]
    fn ftl(&self) -> &'static str {
        self.lock().ftl().name()
    }

    /// What an acknowledged write survives: `"on-ack"` (every completed write)
    /// or `"on-flush"` (only writes completed before a completed flush, or
    /// written with `fua`).
    #[getter]
    fn durability(&self) -> &'static str {
        match self.lock().durability() {
            Durability::OnAck => "on-ack",
            _ => "on-flush",
        }
    }

    fn __repr__(&self) -> String {
        let dev = self.lock();
        format!("<ftlab.Device ftl={} capacity={} now_ns={}>", dev.ftl().name(), dev.capacity(), dev.now().0)
    }
}
