//! libFuzzer entry for `proxima_fuzzing::particle_asset` (particle asset
//! files: load, validate, save and reload, simulate); the body and its
//! checks live there so the CI-sized run in `fuzzing/tests/ci.rs` shares them.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| proxima_fuzzing::particle_asset(data));
