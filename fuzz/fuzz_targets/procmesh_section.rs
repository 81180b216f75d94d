//! libFuzzer entry for `proxima_fuzzing::procmesh_section` (procedural
//! mesh section data and calls); the body and its checks live there so the
//! CI-sized run in `fuzzing/tests/ci.rs` shares them.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| proxima_fuzzing::procmesh_section(data));
