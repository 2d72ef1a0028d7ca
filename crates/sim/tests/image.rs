//! Device images: a device saved to a file and opened again (its FTL rebuilt
//! by recovery) reads back every acknowledged write, for every FTL tried; an
//! image is as large as the pages written, not as the device; a truncated,
//! corrupt or foreign image is a typed error naming the file.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use ftlab_sim::device::{Command, Completion, Device, SECTOR};
use ftlab_sim::{ImageError, RunConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A small device (small-slc, 16 blocks per plane) with FTL `kind` and extra
/// `[device]` lines.
fn config(kind: &str, device_extra: &str) -> RunConfig {
    let toml = format!(
        "seed = 3\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\n{device_extra}\n[ftl]\nkind = \"{kind}\"\n"
    );
    RunConfig::from_toml(&toml, "test").unwrap()
}

fn ok(dev: &mut Device, cmd: Command) -> Completion {
    let name = cmd.name();
    let c = dev.execute(cmd);
    assert!(c.result.is_ok(), "{name} failed: {:?}", c.result);
    c
}

/// Random sector-aligned writes of 1 sector to 3 pages, `rounds` times the
/// capacity in all, into `dev` and `model`.
fn write_random(dev: &mut Device, model: &mut [u8], rounds: f64, seed: u64) {
    let cap = dev.capacity();
    let ps = dev.page_size();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut written = 0;
    while (written as f64) < rounds * cap as f64 {
        let sectors = rng.gen_range(1..=3 * ps / SECTOR);
        let len = sectors * SECTOR;
        let offset = rng.gen_range(0..=(cap - len) / SECTOR) * SECTOR;
        let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        model[offset as usize..(offset + len) as usize].copy_from_slice(&data);
        ok(dev, Command::write(offset, data));
        written += len;
    }
}

fn assert_reads(dev: &mut Device, model: &[u8], what: &str) {
    let ps = dev.page_size();
    let chunk = 16 * ps;
    let mut at = 0;
    while at < model.len() as u64 {
        let len = chunk.min(model.len() as u64 - at);
        let got = ok(dev, Command::read(at, len)).result.unwrap().data.unwrap();
        assert!(got == model[at as usize..(at + len) as usize], "{what}: bytes at {at} differ");
        at += len;
    }
}

/// Writes through garbage collection, saves, opens the image, reads back;
/// then writes more on the opened device, saves over the image and opens it
/// again.
fn save_and_open_keep_every_write(kind: &str, device_extra: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dev.img");
    let config = config(kind, device_extra);
    let mut dev = Device::open(&config).unwrap();
    let mut model = vec![0u8; dev.capacity() as usize];
    write_random(&mut dev, &mut model, 1.5, 1);
    assert!(dev.counters().erases > 0, "{kind}: the writes must reclaim blocks");
    dev.save_image(&path).unwrap();
    assert!(!dir.path().join("dev.img.tmp").exists(), "the temporary file is renamed");
    let saved_at = dev.now();
    drop(dev);

    let mut dev = Device::open_image(&config, &path).unwrap();
    assert!(dev.now() >= saved_at, "{kind}: the clock resumes at the save");
    assert_reads(&mut dev, &model, &format!("{kind}, opened"));
    write_random(&mut dev, &mut model, 0.5, 2);
    dev.save_image(&path).unwrap();
    drop(dev);

    let mut dev = Device::open_image(&config, &path).unwrap();
    assert_reads(&mut dev, &model, &format!("{kind}, opened twice"));
}

#[test]
fn an_image_keeps_every_write_pagemap() {
    save_and_open_keep_every_write("pagemap", "");
}

#[test]
fn an_image_keeps_every_write_dftl() {
    save_and_open_keep_every_write("dftl", "");
}

#[test]
fn an_image_keeps_every_write_nftl() {
    save_and_open_keep_every_write("nftl", "");
}

#[test]
fn an_image_keeps_every_write_other_schemes() {
    for kind in ["gftl", "lazy-rtgc", "bast", "fast", "zns-host"] {
        save_and_open_keep_every_write(kind, "");
    }
}

/// A write-back buffer is flushed before saving: writes acknowledged from RAM
/// are in the image.
#[test]
fn saving_flushes_a_write_back_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("buffered.img");
    let config = config("pagemap", "write_buffer_pages = 32");
    let mut dev = Device::open(&config).unwrap();
    let ps = dev.page_size();
    let c = ok(&mut dev, Command::write(3 * ps, vec![0xd0; ps as usize]));
    assert_eq!(c.latency_ns(), 0, "acknowledged from the buffer");
    dev.save_image(&path).unwrap();
    let mut dev = Device::open_image(&config, &path).unwrap();
    let got = ok(&mut dev, Command::read(3 * ps, ps)).result.unwrap().data.unwrap();
    assert_eq!(got, vec![0xd0; ps as usize]);
}

/// A 1 GiB device with 10 MiB written saves about 10 MiB, not 1 GiB.
#[test]
fn an_image_is_as_large_as_the_pages_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.img");
    let toml = "[device]\nchip = \"small-slc\"\ncapacity_gib = 1\n[ftl]\nkind = \"pagemap\"\n";
    let config = RunConfig::from_toml(toml, "test").unwrap();
    let mut dev = Device::open(&config).unwrap();
    assert!(dev.capacity() > 900 << 20, "{}", dev.capacity());
    for i in 0..10u64 {
        ok(&mut dev, Command::write(i * (50 << 20), vec![i as u8 + 1; 1 << 20]));
    }
    dev.save_image(&path).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size > 10 << 20 && size < 11 << 20, "an image of {size} bytes for 10 MiB written");
    let mut dev = Device::open_image(&config, &path).unwrap();
    let got = ok(&mut dev, Command::read(9 * (50 << 20), 1 << 20)).result.unwrap().data.unwrap();
    assert_eq!(got, vec![10; 1 << 20]);
}

fn saved(kind: &str) -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dev.img");
    let mut dev = Device::open(&config(kind, "")).unwrap();
    let ps = dev.page_size() as usize;
    ok(&mut dev, Command::write(0, vec![5; 3 * ps]));
    dev.save_image(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (dir, path, bytes)
}

fn open_err(config: &RunConfig, path: &Path) -> ImageError {
    Device::open_image(config, path).unwrap_err()
}

#[test]
fn a_truncated_or_corrupt_image_is_an_error_naming_the_file() {
    let (_dir, path, bytes) = saved("pagemap");
    let config = config("pagemap", "");
    for len in [0, 7, 40, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&path, &bytes[..len]).unwrap();
        let e = open_err(&config, &path);
        let nand = match &e {
            ImageError::File { source, .. } => source,
            e => panic!("{len}: {e}"),
        };
        let expected = if len < 8 {
            matches!(nand, ftlab_nand::ImageError::BadMagic)
        } else {
            matches!(nand, ftlab_nand::ImageError::Truncated { .. })
        };
        assert!(expected, "{len}: {e}");
        assert!(e.to_string().contains(&path.display().to_string()), "{e}");
    }
    let mut corrupt = bytes.clone();
    let n = corrupt.len();
    corrupt[n - 100] ^= 1;
    std::fs::write(&path, &corrupt).unwrap();
    let e = open_err(&config, &path);
    assert!(matches!(&e, ImageError::File { source: ftlab_nand::ImageError::Corrupt(_), .. }), "{e}");
    assert!(e.to_string().contains("corrupt"), "{e}");
    let missing = path.with_file_name("missing.img");
    let e = open_err(&config, &missing);
    assert!(e.to_string().contains("missing.img"), "{e}");
}

#[test]
fn an_image_of_another_device_or_ftl_is_refused() {
    let (_dir, path, _) = saved("pagemap");
    let e = open_err(&config("pagemap", "").tap_blocks(32), &path);
    assert!(
        matches!(
            &e,
            ImageError::File { source: ftlab_nand::ImageError::Mismatch { field: "blocks_per_plane", .. }, .. }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("blocks_per_plane = 16"), "{e}");
    let e = open_err(&config("dftl", ""), &path);
    assert!(matches!(&e, ImageError::Ftl { .. }), "{e}");
    assert!(e.to_string().contains("pagemap") && e.to_string().contains("dftl"), "{e}");
}

trait Blocks {
    fn tap_blocks(self, n: u32) -> Self;
}

impl Blocks for RunConfig {
    fn tap_blocks(mut self, n: u32) -> Self {
        self.device.blocks_per_plane = Some(n);
        self
    }
}
