//! `cargo xtask`: the one entry point for building, running, testing and
//! benchmarking Proxima. Before a command that renders it looks for the
//! Vulkan loader, a driver and the Khronos validation layer the way the
//! loader does, and installs only the missing Debian packages (see
//! [`vulkan`]; `PROXIMA_NO_INSTALL=1` never installs).
//!
//! ```text
//! cargo xtask run [<sample> [-- OPTIONS]]   build a sample in release and run it (no name: list them)
//! cargo xtask samples                        build every sample
//! cargo xtask test [-p CRATE] [-- ARGS]      run the tests (all crates by default)
//! cargo xtask bench [--quick] [-p CRATE] [--summary]
//!                                            run the benchmarks and sample figures, write target/bench/summary.{md,json,png}
//! cargo xtask soak [--frames N] [-- OPTIONS] 10,000 frames (or N) of churn in release; fails if memory grows or validation speaks
//! cargo xtask fuzz [--seconds N] [TARGET]    cargo-fuzz (nightly) each fuzz target for N s (default 60)
//! cargo xtask shaders                        validate every WGSL file with naga (and spirv-val when installed)
//! cargo xtask reference [--install] [--width W --height H] MODEL
//!                                            the Khronos glTF Sample Viewer's image of MODEL (headless Chromium),
//!                                            and the gltf sample's of the same scene, in target/reference/<stem>/
//! cargo xtask validate-gltf [--install] [FILES...]
//!                                            the Khronos glTF Validator over FILES (default: ../shared/gltf-samples/),
//!                                            reports in target/gltf-validator/<stem>.json
//! cargo xtask images [--against REV]       every sample's image (640x360, 3 frames) from the working tree and from REV
//!                                            (default HEAD); fails unless the pixels are identical: the guard for refactors
//! cargo xtask lint                           cargo fmt --check, the renderer's module layering and settings reads,
//!                                            clippy on every crate and target, then cargo doc; warnings denied
//! cargo xtask ci                             what .ci/run does: shaders + lint + glTF validator + reference tools and references + test
//! ```
//!
//! `reference` (see [`mod@reference`]) installs what it needs only when asked:
//! `--install` puts Chromium (Debian `chromium`, apt-get) and
//! `@khronosgroup/gltf-viewer` (npm, into `target/reference-tools/`) on the
//! machine; `ci` always installs them and renders the reference of each model
//! under `../shared/gltf-samples/` before the tests, so the tests compare
//! Proxima's images with them (`samples/tests/gltf_reference.rs`). `test`
//! never installs them; without references that test prints a skip line.
//!
//! Every command takes `--help`; an unknown command or option exits with code 2.

mod bench;
mod fn_length;
mod fuzz;
mod gltf_validator;
mod images;
mod layering;
mod package;
mod reference;
mod sample_list;
mod settings_reads;
mod shaders;
mod soak;
mod vulkan;

use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::process::{Command, ExitCode};

const ENVIRONMENT: &str = "\
Set-up: run, test, bench, soak and ci look for the Vulkan loader, a driver and the Khronos
validation layer where the loader does (VK_DRIVER_FILES, VK_ICD_FILENAMES, VK_ADD_DRIVER_FILES,
VK_LAYER_PATH, VK_ADD_LAYER_PATH, the XDG folders, /etc/vulkan, /usr/local/share/vulkan,
/usr/share/vulkan; PROXIMA_VULKAN_LOADER for the loader library) and, on Debian/Ubuntu as root,
install only the missing packages with apt-get, saying what and why first. The validation
layer is required by test, soak and ci, optional for run; ci needs spirv-val too.
PROXIMA_NO_INSTALL=1: never install; say what is missing and how to install it.";

#[derive(Parser, Debug)]
#[command(
    name = "xtask",
    bin_name = "cargo xtask",
    about = "Build, run, test and benchmark Proxima",
    after_help = ENVIRONMENT,
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug, PartialEq, Eq)]
enum Cmd {
    /// Build a sample in release and run it (no name: list the samples)
    #[command(override_usage = "cargo xtask run [SAMPLE] [-- OPTIONS...]")]
    Run(RunArgs),
    /// Build every sample
    Samples,
    /// Run the tests (all crates by default), with the validation layer on
    Test(TestArgs),
    /// Run the benchmarks; summary in target/bench/summary.{md,json,png}
    Bench(BenchArgs),
    /// 10,000 frames of churn in release; fails if memory grows or validation speaks
    Soak(SoakArgs),
    /// Fuzz procmesh_section / particle_asset / gltf_import with cargo-fuzz (nightly), N s each
    Fuzz(FuzzArgs),
    /// Validate every WGSL file (naga, and spirv-val when installed)
    Shaders,
    /// Render MODEL's reference image with the Khronos glTF Sample Viewer in headless Chromium (`target/reference/<stem>/`)
    Reference(ReferenceArgs),
    /// Run the Khronos glTF Validator over FILES (default: every model under ../shared/gltf-samples/); reports in target/gltf-validator/
    #[command(name = "validate-gltf")]
    ValidateGltf(ValidateGltfArgs),
    /// Every sample's image from the working tree and from REV (default HEAD); fails unless identical
    Images(ImagesArgs),
    /// cargo fmt --check, no import cycles among a checked crate's modules (renderer, engine-core, particles, procmesh, xtask), no cvar read outside its settings snapshot, clippy, cargo doc; warnings denied
    Lint,
    /// `cargo package` the six published crates (proxima-*), each built from its package alone; fails on a missing licence or README
    Package,
    /// What .ci/run does: shaders, lint, package, glTF validator, reference tools and references, test, then the rhi-vulkan and renderer tests with PROXIMA_EMULATE_DISCRETE_GPU=1
    Ci,
}

#[derive(Args, Debug, PartialEq, Eq)]
struct RunArgs {
    /// The sample to run; without one, the samples are listed
    sample: Option<String>,
    /// Options for the sample, after `--` (passed through untouched; `-- --help` lists them)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "OPTIONS")]
    options: Vec<String>,
}

#[derive(Args, Debug, PartialEq, Eq)]
struct TestArgs {
    /// Test only this crate (repeatable; its folder's name or its package's, e.g. `renderer` or `proxima-renderer`); all crates by default
    #[arg(short = 'p', long = "package", value_name = "CRATE")]
    packages: Vec<String>,
    /// Arguments for the test binaries, after `--` (e.g. `-- --nocapture`)
    #[arg(last = true, value_name = "ARGS")]
    args: Vec<String>,
}

#[derive(Args, Debug, PartialEq, Eq)]
struct BenchArgs {
    /// The short form (PROXIMA_BENCH_QUICK=1, fewer sample frames)
    #[arg(long)]
    quick: bool,
    /// Only this crate's benches (`samples`: the sample figures only)
    #[arg(short = 'p', long = "package", value_name = "CRATE", value_parser = clap::builder::PossibleValuesParser::new(bench::SOURCES))]
    package: Option<String>,
    /// Only rebuild the summary and plot from the figures already there
    #[arg(long)]
    summary: bool,
}

#[derive(Args, Debug, PartialEq, Eq)]
struct SoakArgs {
    /// Frames in the main run (the synchronization-validation run has N/5)
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    frames: u64,
    /// Options for the soak sample, after `--` (e.g. `-- --width 256 --height 256`)
    #[arg(last = true, value_name = "OPTIONS")]
    options: Vec<String>,
}

#[derive(Args, Debug, PartialEq, Eq)]
struct ReferenceArgs {
    /// The .gltf or .glb file (or a folder holding exactly one)
    #[arg(value_name = "MODEL")]
    model: std::path::PathBuf,
    /// Frame width in pixels (the same for both renderers)
    #[arg(long, value_name = "W", default_value_t = 1280, value_parser = clap::value_parser!(u32).range(1..=8192))]
    width: u32,
    /// Frame height in pixels
    #[arg(long, value_name = "H", default_value_t = 720, value_parser = clap::value_parser!(u32).range(1..=8192))]
    height: u32,
    /// Install what is missing first: Debian `chromium` (apt-get, as root) and
    /// @khronosgroup/gltf-viewer (npm, into target/reference-tools/)
    #[arg(long)]
    install: bool,
}

#[derive(Args, Debug, PartialEq, Eq)]
struct ValidateGltfArgs {
    /// The .gltf / .glb files (default: every one under ../shared/gltf-samples/)
    #[arg(value_name = "FILES")]
    files: Vec<std::path::PathBuf>,
    /// Install what is missing first: gltf-validator (npm, into
    /// target/reference-tools/; Debian `nodejs npm` with apt-get when npm is missing)
    #[arg(long)]
    install: bool,
}

#[derive(Args, Debug, PartialEq, Eq)]
struct ImagesArgs {
    /// The commit to compare with (built in a temporary worktree; its images are kept in `target/images/<commit>/`)
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    against: String,
}

#[derive(Args, Debug, PartialEq, Eq)]
struct FuzzArgs {
    /// Seconds per target
    #[arg(long, value_name = "N", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    seconds: u64,
    /// The targets to fuzz (default: all)
    #[arg(value_name = "TARGET", value_parser = clap::builder::PossibleValuesParser::new(fuzz::TARGETS))]
    targets: Vec<String>,
}

/// Parses `cargo xtask`'s arguments (`args` without the program name); the
/// error is clap's: help text (exit 0) or a usage error (exit 2).
fn parse<I, T>(args: I) -> std::result::Result<Cmd, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    Cli::try_parse_from(std::iter::once(OsString::from("xtask")).chain(args.into_iter().map(Into::into))).map(|cli| cli.command)
}

fn main() -> ExitCode {
    let command = match parse(std::env::args_os().skip(1)) {
        Ok(command) => command,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let result = match command {
        Cmd::Run(a) => run(a.sample.as_deref(), &a.options),
        Cmd::Samples => cargo(&["build", "--release", "-p", "samples", "--bins"]),
        Cmd::Test(a) => test(&a.packages, &a.args),
        Cmd::Bench(a) => bench::bench(a.quick, a.package.as_deref(), a.summary),
        Cmd::Soak(a) => soak::soak(a.frames, &a.options),
        Cmd::Fuzz(a) => fuzz::fuzz(a.seconds, &a.targets),
        Cmd::Shaders => shaders::check_all(),
        Cmd::Reference(a) => reference::reference(&a.model, a.width, a.height, a.install),
        Cmd::ValidateGltf(a) => gltf_validator::validate_gltf(&a.files, a.install),
        Cmd::Images(a) => images::images(&a.against),
        Cmd::Lint => lint(),
        Cmd::Package => package::package(),
        Cmd::Ci => ci(),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

type Result<T> = std::result::Result<T, String>;

/// Runs cargo with `args` from the workspace root; its exit code becomes ours.
pub(crate) fn cargo(args: &[&str]) -> Result<ExitCode> {
    cargo_env(args, &[])
}

/// The cargo that runs xtask (`CARGO`), else `cargo` on the `PATH`.
pub(crate) fn cargo_bin() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

pub(crate) fn cargo_env(args: &[&str], env: &[(&str, &str)]) -> Result<ExitCode> {
    let mut cmd = Command::new(cargo_bin());
    cmd.args(args).current_dir(workspace_root());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let status = cmd.status().map_err(|e| format!("running cargo: {e}"))?;
    Ok(exit_code(status))
}

pub(crate) fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        None => ExitCode::FAILURE,
    }
}

/// The workspace xtask was run for: `cargo run` (the `cargo xtask` alias)
/// sets `CARGO_MANIFEST_DIR` for the process, which names the checkout the
/// command was typed in even when several checkouts share one target
/// directory (`CARGO_TARGET_DIR`) and so one xtask binary; the directory
/// xtask was compiled in is the fallback for a binary run by hand.
pub(crate) fn workspace_root() -> std::path::PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(std::path::PathBuf::from);
    let manifest_dir = manifest_dir.unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest_dir.parent().expect("xtask lives in the workspace root").to_path_buf()
}

fn list_samples(samples: &[sample_list::Sample]) {
    println!("samples (cargo xtask run <sample> [-- OPTIONS]):");
    for s in samples {
        println!("  {:<12} {}", s.name, s.about);
    }
    println!("\ncommon options: see `cargo xtask run <sample> -- --help`");
}

/// Runs `sample` (one of samples/Cargo.toml's list) in release, or lists them.
fn run(sample: Option<&str>, options: &[String]) -> Result<ExitCode> {
    let samples = sample_list::samples()?;
    let Some(sample) = sample else {
        list_samples(&samples);
        return Ok(ExitCode::SUCCESS);
    };
    if !samples.iter().any(|s| s.name == sample) {
        eprintln!("xtask: no sample named {sample:?}");
        list_samples(&samples);
        return Ok(ExitCode::from(2));
    }
    vulkan::ensure("run", vulkan::RUN)?;
    let mut cargo_args = vec!["run", "--quiet", "--release", "-p", "samples", "--bin", sample, "--"];
    cargo_args.extend(options.iter().map(String::as_str));
    cargo(&cargo_args)
}

/// `cargo test` over `packages` (all crates when empty), `args` to the test binaries.
fn test_args<'a>(packages: &'a [String], args: &'a [String]) -> Vec<&'a str> {
    let mut cargo_args = vec!["test"];
    if packages.is_empty() {
        cargo_args.push("--workspace");
    }
    for p in packages {
        cargo_args.extend(["-p", p.as_str()]);
    }
    if !args.is_empty() {
        cargo_args.push("--");
        cargo_args.extend(args.iter().map(String::as_str));
    }
    cargo_args
}

/// Test functions of one binary run one at a time unless `RUST_TEST_THREADS`
/// says otherwise. GPU tests each make their own device, and the Khronos
/// validation layer (1.3.239 here) is not safe against a `vkCreateDevice` on
/// one thread while another device records on another: it crashed inside
/// `vkCmdBeginRendering` about once in 300 runs of the renderer's tests
/// under load (core dump: the other thread was in `vkCreateDevice`). The
/// engine itself uses one device per process; its own threads (render
/// thread, rayon recording) still run in every test.
fn test_threads() -> Vec<(&'static str, String)> {
    match std::env::var("RUST_TEST_THREADS") {
        Ok(_) => Vec::new(),
        Err(_) => vec![("RUST_TEST_THREADS", "1".to_string())],
    }
}

fn test(packages: &[String], args: &[String]) -> Result<ExitCode> {
    vulkan::ensure("test", vulkan::TEST)?;
    let packages: Vec<String> = packages.iter().map(|p| package_name(p)).collect();
    run_tests(&packages, args)
}

/// The crates published to the registry, by folder.
pub(crate) const PUBLISHED_CRATES: &[&str] = &["rhi-vulkan", "renderer", "engine-core", "procmesh", "instancing", "particles"];

/// The Cargo package of a crate folder: a published crate is
/// `proxima-<folder>` (the bare names are taken in the registry), so
/// `cargo xtask test -p renderer` means `proxima-renderer`; any other name
/// (a package name, `samples`, `xtask`) passes through.
pub(crate) fn package_name(krate: &str) -> String {
    if PUBLISHED_CRATES.contains(&krate) {
        format!("proxima-{krate}")
    } else {
        krate.to_string()
    }
}

fn run_tests(packages: &[String], args: &[String]) -> Result<ExitCode> {
    let env = test_threads();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    cargo_env(&test_args(packages, args), &env)
}

/// `cargo fmt --all --check` (one width, rustfmt.toml), the layering checks
/// (no import cycle among the top-level modules of the renderer, engine-core, particles,
/// procmesh and xtask, [`layering`];
/// no console-variable read outside its frame-settings snapshot,
/// [`settings_reads`]; no library function over 100 lines, [`fn_length`]),
/// clippy over the
/// workspace with warnings denied (the lints include the
/// project's rule that every `unsafe` block has a `// SAFETY:` comment, and
/// `missing_docs`), clippy on engine-core and procmesh without their default
/// features (the `collision` gate), then the docs of every crate with rustdoc's warnings
/// denied (broken or private intra-doc links, bad code blocks), so the
/// docs build as docs.rs would build them. Without clippy installed it is
/// an error, here as in CI.
fn lint() -> Result<ExitCode> {
    require_clippy(&cargo_bin())?;
    // Formatting first: cheap, and a diff there says nothing about the code.
    let code = cargo(&["fmt", "--all", "--check"])?;
    if code != ExitCode::SUCCESS {
        eprintln!("lint: the tree is not formatted (rustfmt.toml); run `cargo fmt --all`");
        return Ok(code);
    }
    if !layering::check(&workspace_root())? {
        eprintln!("lint: import cycles among top-level modules (see above); move the shared part below both");
        return Ok(ExitCode::FAILURE);
    }
    if !settings_reads::check(&workspace_root())? {
        return Ok(ExitCode::FAILURE);
    }
    if !fn_length::check(&workspace_root())? {
        return Ok(ExitCode::FAILURE);
    }
    let code = cargo(&["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"])?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    // The workspace build turns every default feature on; this keeps the
    // crates with an optional `collision` feature (parry3d) building and
    // warning-free without it.
    let code = cargo(&[
        "clippy",
        "-p",
        "proxima-engine-core",
        "-p",
        "proxima-procmesh",
        "--no-default-features",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    cargo_env(&["doc", "--no-deps", "--workspace"], &[("RUSTDOCFLAGS", "-D warnings")])
}

/// Fails unless `cargo_bin clippy --version` succeeds: `lint` and `ci` both
/// need clippy, and a CI run without it must fail rather than pass unlinted.
fn require_clippy(cargo_bin: &str) -> Result<()> {
    let has_clippy = Command::new(cargo_bin).args(["clippy", "--version"]).output().is_ok_and(|o| o.status.success());
    if has_clippy {
        Ok(())
    } else {
        Err(format!("clippy is not installed for {cargo_bin:?}; install it with `rustup component add clippy`"))
    }
}

/// Shaders, lint, the glTF validator's reports, the reference images, tests. Clippy is checked first,
/// before anything is installed or built, so a machine without it fails at
/// once. The reference renderer (Chromium, the glTF Sample Viewer) is
/// installed and each shared model's reference rendered before the tests,
/// so the comparison test runs rather than skips.
fn ci() -> Result<ExitCode> {
    require_clippy(&cargo_bin())?;
    vulkan::ensure("ci", vulkan::CI)?;
    for step in [shaders::check_all, lint, package::package] {
        let code = step()?;
        if code != ExitCode::SUCCESS {
            return Ok(code);
        }
    }
    // The validator's reports, which engine-core's gltf_validator test reads.
    // A model with validator errors is not a failure here; the validator
    // failing to install or run is.
    gltf_validator::validate_gltf(&[], true).map_err(|e| format!("ci: the Khronos glTF Validator could not run: {e}"))?;
    reference::install()?;
    let shared = reference::shared_models_dir();
    let models = reference::shared_models(&shared);
    if models.is_empty() {
        eprintln!("xtask: ci: no shared glTF models in {}; no references rendered", shared.display());
    }
    for model in models {
        reference::render_reference(&model, 1280, 720)?;
    }
    let code = run_tests(&[], &[])?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    // The paths a discrete GPU takes: the RHI's and the renderer's GPU
    // tests again with device-local memory emulated (the samples' test
    // compares the showcase both ways).
    println!("xtask ci: the rhi-vulkan and renderer tests again with {}=1", rhi_emulation_var());
    let packages = [package_name("rhi-vulkan"), package_name("renderer")];
    let mut env = test_threads();
    env.push((rhi_emulation_var(), "1".to_string()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    cargo_env(&test_args(&packages, &[]), &env)
}

/// The environment variable of the RHI's discrete-GPU emulation
/// (`rhi_vulkan::EMULATE_DISCRETE_GPU_VAR`; xtask does not depend on it).
fn rhi_emulation_var() -> &'static str {
    "PROXIMA_EMULATE_DISCRETE_GPU"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_crate_is_named_by_its_folder_or_its_package() {
        assert_eq!(package_name("renderer"), "proxima-renderer");
        assert_eq!(package_name("proxima-renderer"), "proxima-renderer");
        assert_eq!(package_name("samples"), "samples");
        for krate in PUBLISHED_CRATES {
            let manifest = std::fs::read_to_string(workspace_root().join(krate).join("Cargo.toml")).unwrap();
            assert!(manifest.contains(&format!("name = \"{}\"", package_name(krate))), "{krate}/Cargo.toml");
        }
    }
    use clap::error::ErrorKind;

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn run_args(sample: Option<&str>, options: &[&str]) -> Cmd {
        Cmd::Run(RunArgs { sample: sample.map(String::from), options: strings(options) })
    }

    /// An unknown option is a usage error (exit 2), not a full bench run.
    #[test]
    fn unknown_options_and_commands_are_rejected_with_exit_code_2() {
        for args in [
            &["bench", "--quik"][..],
            &["test", "--nocapture"],
            &["soak", "--frame", "5"],
            &["fuzz", "--second", "5"],
            &["run", "--quik"],
            &["lint", "--fix"],
            &["ci", "extra"],
            &["reference"],
            &["reference", "m.gltf", "--widht", "5"],
            &["nope"],
            &[],
        ] {
            let err = parse(args).expect_err(&format!("{args:?} parsed"));
            assert_eq!(err.exit_code(), 2, "{args:?}: {err}");
        }
        assert_eq!(parse(["bench", "--quik"]).unwrap_err().kind(), ErrorKind::UnknownArgument);
    }

    #[test]
    fn bad_values_are_rejected() {
        for args in [
            &["bench", "-p", "nope"][..],
            &["bench", "-p"],
            &["soak", "--frames", "0"],
            &["soak", "--frames", "many"],
            &["fuzz", "--seconds", "0"],
            &["fuzz", "--seconds"],
            &["fuzz", "nope"],
            &["reference", "m.gltf", "--width", "0"],
            &["reference", "m.gltf", "--height", "tall"],
        ] {
            assert_eq!(parse(args).expect_err(&format!("{args:?} parsed")).exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn every_command_has_help() {
        for cmd in ["run", "samples", "test", "bench", "soak", "fuzz", "shaders", "reference", "validate-gltf", "images", "lint", "ci"] {
            for args in [vec![cmd, "--help"], vec![cmd, "-h"], vec!["help", cmd]] {
                let err = parse(&args).expect_err("help is not a command");
                assert_eq!(err.kind(), ErrorKind::DisplayHelp, "{args:?}");
                assert_eq!(err.exit_code(), 0, "{args:?}");
            }
        }
        assert_eq!(parse(["--help"]).unwrap_err().exit_code(), 0);
        let help = parse(["--help"]).unwrap_err().render().to_string();
        assert!(help.contains("PROXIMA_NO_INSTALL"), "{help}");
    }

    #[test]
    fn documented_forms_parse() {
        assert_eq!(parse(["run"]).unwrap(), run_args(None, &[]));
        assert_eq!(parse(["samples"]).unwrap(), Cmd::Samples);
        assert_eq!(parse(["shaders"]).unwrap(), Cmd::Shaders);
        assert_eq!(parse(["lint"]).unwrap(), Cmd::Lint);
        assert_eq!(parse(["ci"]).unwrap(), Cmd::Ci);
        assert_eq!(parse(["package"]).unwrap(), Cmd::Package);
        assert_eq!(parse(["test"]).unwrap(), Cmd::Test(TestArgs { packages: vec![], args: vec![] }));
        assert_eq!(
            parse(["test", "-p", "renderer", "--package", "particles", "--", "--nocapture", "--test-threads=1"]).unwrap(),
            Cmd::Test(TestArgs { packages: strings(&["renderer", "particles"]), args: strings(&["--nocapture", "--test-threads=1"]) })
        );
        assert_eq!(parse(["bench"]).unwrap(), Cmd::Bench(BenchArgs { quick: false, package: None, summary: false }));
        assert_eq!(
            parse(["bench", "--quick", "-p", "samples"]).unwrap(),
            Cmd::Bench(BenchArgs { quick: true, package: Some("samples".into()), summary: false })
        );
        assert_eq!(parse(["bench", "--summary"]).unwrap(), Cmd::Bench(BenchArgs { quick: false, package: None, summary: true }));
        assert_eq!(parse(["soak"]).unwrap(), Cmd::Soak(SoakArgs { frames: 10_000, options: vec![] }));
        assert_eq!(
            parse(["soak", "--frames", "300", "--", "--width", "256"]).unwrap(),
            Cmd::Soak(SoakArgs { frames: 300, options: strings(&["--width", "256"]) })
        );
        assert_eq!(parse(["fuzz"]).unwrap(), Cmd::Fuzz(FuzzArgs { seconds: 60, targets: vec![] }));
        assert_eq!(
            parse(["reference", "m.gltf"]).unwrap(),
            Cmd::Reference(ReferenceArgs { model: "m.gltf".into(), width: 1280, height: 720, install: false })
        );
        assert_eq!(
            parse(["reference", "--install", "--width", "64", "--height", "48", "m.glb"]).unwrap(),
            Cmd::Reference(ReferenceArgs { model: "m.glb".into(), width: 64, height: 48, install: true })
        );
        assert_eq!(parse(["validate-gltf"]).unwrap(), Cmd::ValidateGltf(ValidateGltfArgs { files: vec![], install: false }));
        assert_eq!(
            parse(["validate-gltf", "--install", "a.gltf", "b.glb"]).unwrap(),
            Cmd::ValidateGltf(ValidateGltfArgs { files: vec!["a.gltf".into(), "b.glb".into()], install: true })
        );
        assert_eq!(
            parse(["fuzz", "--seconds", "5", "particle_asset"]).unwrap(),
            Cmd::Fuzz(FuzzArgs { seconds: 5, targets: strings(&["particle_asset"]) })
        );
    }

    /// Everything after `--` reaches the sample as it was typed, `--help`
    /// and a second `--` included.
    #[test]
    fn run_passes_options_through_untouched() {
        assert_eq!(parse(["run", "showcase"]).unwrap(), run_args(Some("showcase"), &[]));
        let options = ["--frames", "60", "--stats", "showcase.json", "--help", "-x", "--", "--cvar", "A=1"];
        let mut args = vec!["run", "showcase", "--"];
        args.extend(options);
        assert_eq!(parse(&args).unwrap(), run_args(Some("showcase"), &options));
        // Without `--`, what follows the sample still goes to it.
        assert_eq!(parse(["run", "many-cubes", "--count", "5000"]).unwrap(), run_args(Some("many-cubes"), &["--count", "5000"]));
    }

    /// Lint and CI fail without clippy (CI used to pass with a notice), and
    /// the error says how to install it.
    #[cfg(unix)]
    #[test]
    fn a_missing_clippy_is_an_error() {
        for missing in ["/nonexistent/cargo", "false"] {
            let err = require_clippy(missing).expect_err(missing);
            assert!(err.contains("rustup component add clippy"), "{err}");
        }
        // `true clippy --version` succeeds, as an installed clippy does.
        assert_eq!(require_clippy("true"), Ok(()));
    }

    #[test]
    fn test_builds_the_cargo_command() {
        assert_eq!(test_args(&[], &[]), ["test", "--workspace"]);
        assert_eq!(test_args(&strings(&["renderer"]), &strings(&["--nocapture"])), ["test", "-p", "renderer", "--", "--nocapture"]);
    }
}
