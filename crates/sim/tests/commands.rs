//! The chip's advanced commands through the device and the replay engine:
//! multi-plane programs for multi-page writes, cache program, and erase
//! suspension for host reads (`[device.commands]`, `ftlab_nand::commands`).
#![allow(clippy::unwrap_used)]

use ftlab_sim::device::{Command, Device};
use ftlab_sim::RunConfig;

fn config(commands: &str, ftl: &str) -> RunConfig {
    let text = format!(
        "seed = 3\n[device]\nchip = \"small-slc\"\nplanes = 2\nblocks_per_plane = 16\npages_per_block = 16\n\
         [device.commands]\n{commands}\n[ftl]\nkind = \"pagemap\"\n{ftl}\n"
    );
    RunConfig::from_toml(&text, "commands-test").unwrap()
}

const MULTI: &str = "plane_allocation = \"multi-plane\"";

#[test]
fn aligned_two_page_writes_are_multi_plane_programs() {
    let mut dev = Device::open(&config("multi_plane = true", MULTI)).unwrap();
    let ps = dev.page_size();
    let mut t = ftlab_nand::SimTime::ZERO;
    for i in 0..40u64 {
        dev.submit(t, Command::write(i * 2 * ps, vec![i as u8 + 1; 2 * ps as usize])).unwrap();
        let c = dev.step().unwrap();
        assert!(c.result.is_ok());
        t = c.completed;
    }
    let c = *dev.flash().counters();
    assert_eq!(c.programs.total(), 80);
    assert_eq!(c.multi_plane.total(), 40, "{c:?}");
    for i in 0..40u64 {
        let got = dev.execute(Command::read(i * 2 * ps, 2 * ps)).result.unwrap().data.unwrap();
        assert!(got.iter().all(|&b| b == i as u8 + 1));
    }
}
