//! libFuzzer entry for `proxima_fuzzing::gltf_import` (bytes imported as a
//! `.gltf`/`.glb` file: no panic, errors that say where, a well-formed
//! import); the body and its checks live there so the CI-sized run in
//! `fuzzing/tests/ci.rs` shares them.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| proxima_fuzzing::gltf_import(data));
