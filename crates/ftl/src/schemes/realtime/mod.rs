//! Real-time schemes: those that promise a worst-case service time (GFTL,
//! RFTL, FSR, Lazy-RTGC, on-demand Lazy-RTGC; [`crate::RealTime`]), admit
//! periodic tasks (Telomere), or bound garbage collection's pauses as a
//! real-time baseline (WAO-GC).

pub mod fsr;
pub mod gftl;
pub mod lazy_rtgc;
pub mod lazy_rtgc_ondemand;
pub mod rftl;
pub mod telomere;
pub mod waogc;
