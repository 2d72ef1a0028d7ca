//! The byte store's memory on a large device: the Telomere 1 TB SSD preset
//! (64 dies, 32 KiB pages) holding full page bytes, with 1 GiB programmed.
//! Prints the process's resident memory before and after, and the medium's own
//! estimate. Linux only (reads `/proc/self/status`).
//!
//! ```sh
//! cargo run --release -p ftlab-nand --example byte_store_memory
//! ```

use ftlab_nand::presets::preset;
use ftlab_nand::{BlockId, Nand, NandConfig, PageKind, Payload, SimTime, StoreKind, WearConfig};

/// Resident memory of this process, MiB.
fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let chip = preset("telomere-1tb-ssd").ok_or("no telomere-1tb-ssd preset")?;
    let g = chip.geometry;
    let config = NandConfig {
        geometry: g,
        timing: chip.timing,
        bad_block_rate: 0.0,
        wear: WearConfig::default(),
        store: StoreKind::Bytes,
        seed: 1,
        faults: Default::default(),
        commands: Default::default(),
    };
    let before = rss_mib();
    let mut nand = Nand::new(&config)?;
    let built = rss_mib();
    let page = g.page_size as u64;
    let pages = (1u64 << 30) / page;
    // A buffer of its own per page, as host writes bring.
    let data: Vec<u8> = (0..g.page_size).map(|i| i as u8).collect();
    // Whole blocks, in order.
    for i in 0..pages {
        let block = BlockId((i / u64::from(g.pages_per_block)) as u32);
        let ppa = g.ppa(block, (i % u64::from(g.pages_per_block)) as u32);
        nand.program(ppa, i as u32, PageKind::Data, Payload::Bytes(data.to_vec().into()), SimTime::ZERO)?;
    }
    let written = rss_mib();
    println!(
        "device {:.0} GiB ({} pages of {} KiB), byte store; {} pages (1 GiB) programmed",
        g.total_pages() as f64 * page as f64 / f64::from(1u32 << 30),
        g.total_pages(),
        page / 1024,
        pages
    );
    println!("resident: {before:.0} MiB at start, {built:.0} MiB once built, {written:.0} MiB after 1 GiB written");
    println!("medium's estimate (ram_bytes): {:.0} MiB", nand.ram_bytes() as f64 / f64::from(1u32 << 20));
    Ok(())
}
