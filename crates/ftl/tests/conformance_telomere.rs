#![allow(clippy::unwrap_used)]
//! The conformance suite for Telomere (000): without hints every write goes to the
//! default pool (greedy GC), with and without blocks reserved for a task set.

use ftlab_ftl::conformance;

use ftlab_ftl::schemes::realtime::telomere::{Placement, TaskConfig, TelomereConfig};

fn with_tasks(policy: Placement) -> TelomereConfig {
    let task = |name: &str, write_pages, write_period_ms, lifetime_ms, granularity| TaskConfig {
        name: name.into(),
        write_pages,
        write_period_ms,
        lifetime_ms,
        granularity,
        ..TaskConfig::default()
    };
    TelomereConfig {
        policy,
        tasks: vec![task("a", 2, 10.0, 40.0, 2), task("b", 1, 20.0, 60.0, 1)],
        ..TelomereConfig::default()
    }
}

conformance!(telomere_sharp, TelomereConfig::default());
conformance!(telomere_sip, TelomereConfig { policy: Placement::Sip, ..TelomereConfig::default() });
conformance!(telomere_sharp_tasks, with_tasks(Placement::Sharp));
conformance!(telomere_sip_tasks, with_tasks(Placement::Sip));
conformance!(
    telomere_sip_health_bin,
    TelomereConfig { free_order: ftlab_ftl::alloc::FreeOrder::HealthBin, ..with_tasks(Placement::Sip) }
);
conformance!(
    telomere_sharp_rber,
    TelomereConfig { free_order: ftlab_ftl::alloc::FreeOrder::Rber, ..with_tasks(Placement::Sharp) }
);
// The pool on die 0 only: it spills to the other dies when die 0 has no free
// block, never holding more than one open block (its slack counts one).
conformance!(telomere_sharp_tasks_one_pool_die, TelomereConfig { pool_dies: 1, ..with_tasks(Placement::Sharp) });
conformance!(
    telomere_sip_two_pool_dies,
    TelomereConfig { pool_dies: 2, policy: Placement::Sip, ..TelomereConfig::default() }
);
