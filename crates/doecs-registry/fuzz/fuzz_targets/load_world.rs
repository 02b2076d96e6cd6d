//! Any bytes given to the world loader give a world or a typed error: never
//! a panic, a hang or undefined behaviour. Loaded worlds must pass their
//! invariant checks. The registry is the one the regression test in
//! `crates/doecs-registry/tests/fuzz_regressions.rs` uses.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/fuzz_registry.rs"]
mod fuzz_registry;

fuzz_target!(|data: &[u8]| {
    let registry = fuzz_registry::registry();
    for skip_unknown in [false, true] {
        let options = doecs_registry::LoadOptions {
            skip_unknown,
            ..Default::default()
        };
        if let Ok(world) = doecs_registry::load_world_from_bytes(data, &registry, options) {
            world.check_invariants();
        }
    }
});
