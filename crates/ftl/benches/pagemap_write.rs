//! The pagemap write path: uniform random 4 KiB overwrites of a 16 GiB device at
//! 90% logical utilization in steady-state garbage collection, token store.
//! Throughput is host page writes per second; the bench also prints the RAM used
//! per physical page by the FTL and the medium together.
#![allow(clippy::unwrap_used)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ftlab_ftl::schemes::page::pagemap::PageMapConfig;
use ftlab_ftl::{Flash, Ftl, FtlBuilder, Hint, Lpn};
use ftlab_nand::{Geometry, Nand, NandConfig, Payload, SimTime, StoreKind, Timing, WearConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// 8 dies x 2 planes x 1024 blocks x 256 pages x 4 KiB = 16 GiB.
fn device() -> NandConfig {
    NandConfig {
        geometry: Geometry {
            channels: 4,
            ways_per_channel: 2,
            dies_per_way: 1,
            planes_per_die: 2,
            blocks_per_plane: 1024,
            pages_per_block: 256,
            page_size: 4096,
            oob_size: 224,
        },
        timing: Timing {
            read_ns: 50_000,
            read_oob_ns: 50_000,
            program_ns: 600_000,
            erase_ns: 3_000_000,
            channel_mb_per_s: 400,
        },
        bad_block_rate: 0.0,
        wear: WearConfig::default(),
        store: StoreKind::Token,
        seed: 1,
        faults: Default::default(),
        commands: Default::default(),
    }
}

struct Setup {
    flash: Flash,
    ftl: Box<dyn Ftl>,
    rng: ChaCha8Rng,
    now: SimTime,
    token: u64,
}

impl Setup {
    fn write_random(&mut self, n: u64) {
        let pages = self.ftl.logical_pages();
        for _ in 0..n {
            let lpn = self.rng.gen_range(0..pages);
            self.token += 1;
            let mut io = self.flash.io(self.now);
            self.ftl.write(&mut io, Lpn(lpn), Payload::Token(self.token), &Hint::default()).unwrap();
            self.now = io.completion();
        }
    }
}

fn setup() -> Setup {
    let config = PageMapConfig { over_provisioning: 0.10, gc_free_blocks: 2, ..PageMapConfig::default() };
    let mut flash = Flash::new(Nand::new(&device()).unwrap());
    let ftl = config.format(&mut flash.io(SimTime::ZERO)).unwrap();
    let mut s = Setup { flash, ftl, rng: ChaCha8Rng::seed_from_u64(42), now: SimTime::ZERO, token: 0 };
    // Sequential fill, then one logical space of random overwrites: steady state.
    for lpn in 0..s.ftl.logical_pages() {
        s.token += 1;
        let mut io = s.flash.io(s.now);
        s.ftl.write(&mut io, Lpn(lpn), Payload::Token(s.token), &Hint::default()).unwrap();
        s.now = io.completion();
    }
    let pages = u64::from(s.ftl.logical_pages());
    s.write_random(pages);
    let physical = u64::from(s.flash.nand().geometry().total_pages());
    let ram = s.ftl.ram_bytes() + s.flash.nand().ram_bytes();
    eprintln!(
        "pagemap 16 GiB, 90% utilization: {} logical / {} physical pages, RAM {} bytes = {:.2} bytes per physical page",
        pages,
        physical,
        ram,
        ram as f64 / physical as f64
    );
    // The simulated results of preconditioning: identical across implementation
    // changes (a run is fully determined by its config and seed).
    let c = s.flash.counters();
    eprintln!(
        "preconditioning: simulated time {} ns, WAF {:.6}, programs {}, copybacks {}, erases {}",
        s.now.as_ns(),
        c.waf().unwrap_or(0.0),
        c.programs.total(),
        c.copybacks.total(),
        c.erases.total()
    );
    s.flash.reset_counters();
    s
}

fn bench(c: &mut Criterion) {
    let mut s = setup();
    const BATCH: u64 = 100_000;
    let mut g = c.benchmark_group("pagemap");
    g.throughput(Throughput::Elements(BATCH));
    g.sample_size(20);
    g.bench_function("random_4k_overwrite_16GiB_90pct", |b| b.iter(|| s.write_random(BATCH)));
    g.finish();
    let counters = s.flash.counters();
    eprintln!("steady-state WAF during the benchmark: {:.3}", counters.waf().unwrap_or(0.0));
}

criterion_group!(benches, bench);
criterion_main!(benches);
