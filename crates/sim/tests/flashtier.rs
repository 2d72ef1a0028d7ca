//! FlashTier's host side: the cache managers over a disk and a flash cache
//! (003 Section 3.3), end to end with the integrity check.
#![allow(clippy::unwrap_used)]

use ftlab_sim::flashtier::{run, FlashtierConfig, System};
use ftlab_workload::filebench::Personality;

#[test]
fn every_system_and_workload_keeps_data_intact() {
    let config = FlashtierConfig::ci(20_000);
    for p in Personality::ALL {
        for s in System::ALL {
            let o = run(&config, p, s).unwrap();
            println!("{:?}", o);
            assert_eq!(o.integrity_errors, 0, "{} on {}", p.name(), s.name());
            assert!(o.checked_blocks > 0);
        }
    }
}
