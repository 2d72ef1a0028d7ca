//! The Nameless-Write device through the block interface (its virtual-write,
//! metadata path: `write` = virtual-write, `read` = virtual-read). Its data path
//! (nameless writes, physical reads, migrations) has its own suite in
//! `tests/nameless.rs`.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;
use ftlab_ftl::schemes::host::nameless::NamelessConfig;

// The block interface is the metadata space, which is a share of the device
// (`virtual_share`, default 5%); the suite's full-device overwrite needs the
// logical space to fill the device, so it runs with nearly all of the capacity
// as metadata space (garbage collection then runs hard on the metadata path).
// With the default share, three overwrites of the 5% never reclaim a block.
conformance!(nameless_block_interface, NamelessConfig { virtual_share: 0.95, ..NamelessConfig::default() });
