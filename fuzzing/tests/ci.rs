//! The CI-sized fuzz run: every fuzz target body over its checked-in seed
//! corpus (`corpus/<target>/`) and a few thousand deterministic mutations
//! of it, on stable, in the normal test suite (`cargo xtask test`).
//!
//! Why here as well as in `cargo xtask fuzz`: a coverage-guided run needs
//! nightly and minutes; this needs neither, so every test run replays what
//! past fuzzing found (a crash input is added to the corpus once fixed)
//! and shakes the seeds a little around it. Mutations come from a fixed
//! seed, so a failure here fails the same way on every machine; the input
//! that failed is written to `$CARGO_TARGET_TMPDIR/fuzz-ci/` to be added to
//! the corpus after the fix.
//!
//! The procmesh seeds are binary call sequences in the format decoded by
//! `proxima_fuzzing::Bytes` (a quad created, updated, hidden, given a
//! material and cleared; two sections with sRGB and linear colors; convex
//! collision with async cooking; NaN, out-of-range and overflowing input).
//! The particle seeds are copies of the samples' real assets and the
//! particles crate's fountain (for cargo-fuzz), small valid and broken
//! files, and, here, those real assets read from where they live now.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use test_support::Rng;

/// Mutations per target: a few thousand, a few seconds each in a debug build.
const MUTATIONS: usize = 3000;

/// Tokens worth splicing into text inputs (JSON structure and the numbers
/// that break validation).
const TOKENS: &[&[u8]] = &[b"{", b"}", b"[", b"]", b",", b":", b"\"", b"null", b"-1", b"0", b"1e999", b"-1e999", b"4294967296", b"NaN", b"\"emitters\"", b"\"modules\"", b"1.5"];

/// One to four random edits of `input`: bit flips, byte sets, truncation,
/// insertion of random bytes or a token, a duplicated or deleted run, or a
/// splice with `other`.
fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(8) {
            0 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] = rng.next_u64() as u8;
            }
            2 => out.truncate(at),
            3 => {
                let bytes: Vec<u8> = (0..1 + rng.below(8)).map(|_| rng.next_u64() as u8).collect();
                out.splice(at..at, bytes);
            }
            4 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                out.splice(at..at, token.iter().copied());
            }
            5 if at < out.len() => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                let run = out[at..end].to_vec();
                out.splice(at..at, run);
            }
            6 if at < out.len() => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                out.drain(at..end);
            }
            _ => {
                let from = rng.below(other.len() + 1);
                out.truncate(at);
                out.extend_from_slice(&other[from..]);
            }
        }
    }
    out
}

/// Every file in `dir`, sorted by path.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let data = std::fs::read(&p).unwrap();
            (p, data)
        })
        .collect();
    files.sort();
    files
}

/// The checked-in seeds of `target`; for the particle assets also the
/// samples' and the particles crate's assets as they are now (the corpus
/// holds copies for cargo-fuzz, which may fall behind).
fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seeds = files(&root.join("corpus").join(target));
    assert!(seeds.len() >= 3, "the {target} corpus needs a few seeds, found {}", seeds.len());
    if target == "particle_asset" {
        for dir in ["../samples/assets/particles", "../particles/assets"] {
            seeds.extend(files(&root.join(dir)));
        }
    }
    seeds
}

/// Runs `body` on `input`; on a panic, saves the input and fails naming it.
fn run_one(target: &str, body: fn(&[u8]), what: &str, input: &[u8]) {
    if catch_unwind(AssertUnwindSafe(|| body(input))).is_err() {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-ci").join(target);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("crash-{}", what.replace(['/', ' '], "_")));
        std::fs::write(&path, input).unwrap();
        panic!("{target}: {what} panicked (input saved to {}; fix, then add it to fuzzing/corpus/{target}/)", path.display());
    }
}

/// Every seed, then `MUTATIONS` mutants of seeds chosen at random.
fn run_target(target: &str, body: fn(&[u8])) {
    let seeds = corpus(target);
    for (path, data) in &seeds {
        run_one(target, body, &format!("seed {}", path.file_name().unwrap().to_string_lossy()), data);
    }
    let mut rng = Rng::new(0x5e_ed0f_f022);
    for n in 0..MUTATIONS {
        let (path, seed) = &seeds[rng.below(seeds.len())];
        let other = &seeds[rng.below(seeds.len())].1;
        let input = mutate(&mut rng, seed, other);
        run_one(target, body, &format!("mutation {n} of {}", path.file_name().unwrap().to_string_lossy()), &input);
    }
}

fn body(name: &str) -> fn(&[u8]) {
    proxima_fuzzing::TARGETS.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no target {name}")).1
}

#[test]
fn procmesh_section_corpus_and_mutations() {
    run_target("procmesh_section", body("procmesh_section"));
}

#[test]
fn particle_asset_corpus_and_mutations() {
    run_target("particle_asset", body("particle_asset"));
}

/// The checked-in particle corpus holds assets that load and files that
/// do not (so mutations start from both sides of validation).
#[test]
fn particle_corpus_covers_valid_and_invalid_files() {
    let seeds = files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/particle_asset"));
    let loads = |data: &[u8]| std::str::from_utf8(data).ok().is_some_and(|t| particles::ParticleSystem::from_json_str(t).is_ok());
    assert!(seeds.iter().filter(|(_, d)| loads(d)).count() >= 3);
    assert!(seeds.iter().filter(|(_, d)| !loads(d)).count() >= 3);
}

/// The mutator is the CI run's only source of variety: it must change
/// inputs, and the same way every time.
#[test]
fn mutations_vary_and_repeat() {
    let seed = b"{\"emitters\": []}";
    let run = || {
        let mut rng = Rng::new(1);
        (0..64).map(|_| mutate(&mut rng, seed, b"other")).collect::<Vec<_>>()
    };
    let a = run();
    assert_eq!(a, run());
    assert!(a.iter().filter(|m| m.as_slice() != seed).count() > 48);
}
