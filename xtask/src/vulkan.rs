//! What a command needs from the machine (the Vulkan loader, a driver, the
//! Khronos validation layer, `spirv-val`), found the way the Vulkan loader
//! finds it, and installed with apt-get only when it is missing.
//!
//! Discovery is plain file and environment inspection, a pure function of an
//! explicit [`Env`] (the variables, a root for the fixed system paths, the
//! `ldconfig -p` cache), so the tests run it on a fake tree:
//!
//! - the loader: `PROXIMA_VULKAN_LOADER` (the library the engine then loads)
//!   when set, else `libvulkan.so.1` in `LD_LIBRARY_PATH`, the `ldconfig`
//!   cache or the standard library folders;
//! - drivers: ICD manifests (`*.json` with an `ICD.library_path` that
//!   resolves) in `VK_DRIVER_FILES` (else `VK_ICD_FILENAMES`), which replace
//!   the standard search, else in `VK_ADD_DRIVER_FILES` and the loader's
//!   folders: `$XDG_CONFIG_HOME` (`~/.config`), `$XDG_CONFIG_DIRS`
//!   (`/etc/xdg`), `/etc`, `$XDG_DATA_HOME` (`~/.local/share`) and
//!   `$XDG_DATA_DIRS` (`/usr/local/share:/usr/share`), each + `/vulkan/icd.d`;
//! - the validation layer: a manifest naming `VK_LAYER_KHRONOS_validation`
//!   in `VK_LAYER_PATH`, which replaces the standard search, else in
//!   `VK_ADD_LAYER_PATH` and the same folders + `/vulkan/explicit_layer.d`;
//! - `spirv-val`: on `PATH`.
//!
//! [`plan`] turns what is missing into one step: nothing to do, install
//! these Debian packages (as root, with apt-get), or stop and say how to
//! install them — always under `PROXIMA_NO_INSTALL=1`, off Debian (the dnf,
//! pacman and LunarG SDK equivalents), without root, and when a package would
//! not help because a variable points the loader elsewhere. A missing
//! [`Need::Optional`] thing is only reported.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Variables set to this (anything but empty or `0`) forbid installing.
pub const NO_INSTALL_VAR: &str = "PROXIMA_NO_INSTALL";
/// The loader library the engine loads instead of `libvulkan.so.1`.
pub const LOADER_VAR: &str = "PROXIMA_VULKAN_LOADER";
const VALIDATION_LAYER: &str = "VK_LAYER_KHRONOS_validation";
const LOADER_LIBRARY: &str = "libvulkan.so.1";

/// The variables discovery reads; [`Env::from_process`] copies these only.
const VARS: &[&str] = &[
    "VK_DRIVER_FILES",
    "VK_ICD_FILENAMES",
    "VK_ADD_DRIVER_FILES",
    "VK_LAYER_PATH",
    "VK_ADD_LAYER_PATH",
    "XDG_CONFIG_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_HOME",
    "XDG_DATA_DIRS",
    "HOME",
    "PATH",
    "LD_LIBRARY_PATH",
    LOADER_VAR,
    NO_INSTALL_VAR,
];

/// Everything discovery and planning read about the machine.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// Environment variables by name (unset and empty are the same).
    pub vars: BTreeMap<String, String>,
    /// Prefix of the fixed system paths (`/etc`, `/usr/share`, `/usr/lib`,
    /// `/etc/debian_version`): `/` on the real system. Paths taken from
    /// variables are used as they are.
    pub sysroot: PathBuf,
    /// The output of `ldconfig -p`, when it ran.
    pub ldconfig: Option<String>,
    /// Whether this process runs as root (apt-get needs it).
    pub root: bool,
}

impl Env {
    /// The real machine: this process's variables, `/`, `ldconfig -p`, its uid.
    pub fn from_process() -> Env {
        let vars = VARS.iter().filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v))).collect();
        let ldconfig = ["ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"].iter().find_map(|exe| {
            let out = Command::new(exe).arg("-p").output().ok()?;
            out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
        });
        Env { vars, sysroot: PathBuf::from("/"), ldconfig, root: is_root() }
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }

    /// A fixed system path under [`Env::sysroot`].
    fn sys(&self, path: &str) -> PathBuf {
        self.sysroot.join(path.trim_start_matches('/'))
    }

    /// `PROXIMA_NO_INSTALL` set to anything but empty or `0`.
    pub fn no_install(&self) -> bool {
        self.var(NO_INSTALL_VAR).is_some_and(|v| v != "0")
    }

    fn list(&self, name: &str) -> Vec<PathBuf> {
        self.var(name).map(split_paths).unwrap_or_default()
    }

    /// A colon-separated XDG list, or its default (system paths).
    fn xdg_dirs(&self, name: &str, default: &[&str]) -> Vec<PathBuf> {
        match self.var(name) {
            Some(v) => split_paths(v),
            None => default.iter().map(|d| self.sys(d)).collect(),
        }
    }

    /// A per-user XDG folder, or `$HOME/<fallback>`.
    fn xdg_home(&self, name: &str, fallback: &str) -> Option<PathBuf> {
        self.var(name).map(PathBuf::from).or_else(|| self.var("HOME").map(|h| Path::new(h).join(fallback)))
    }

    /// The loader's standard folders, in its order, each + `vulkan/<kind>`.
    fn standard_dirs(&self, kind: &str) -> Vec<PathBuf> {
        let mut roots = Vec::new();
        roots.extend(self.xdg_home("XDG_CONFIG_HOME", ".config"));
        roots.extend(self.xdg_dirs("XDG_CONFIG_DIRS", &["/etc/xdg"]));
        roots.push(self.sys("/etc"));
        roots.extend(self.xdg_home("XDG_DATA_HOME", ".local/share"));
        roots.extend(self.xdg_dirs("XDG_DATA_DIRS", &["/usr/local/share", "/usr/share"]));
        let mut dirs: Vec<PathBuf> = Vec::new();
        for root in roots {
            let dir = root.join("vulkan").join(kind);
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        dirs
    }

    /// Where the loader looks for driver manifests, and the variable that
    /// replaced the standard search, if one did.
    pub fn driver_search(&self) -> (Vec<PathBuf>, Option<&'static str>) {
        for var in ["VK_DRIVER_FILES", "VK_ICD_FILENAMES"] {
            if self.var(var).is_some() {
                return (self.list(var), Some(var));
            }
        }
        let mut paths = self.list("VK_ADD_DRIVER_FILES");
        paths.extend(self.standard_dirs("icd.d"));
        (paths, None)
    }

    /// Where the loader looks for explicit layer manifests, and the variable
    /// that replaced the standard search, if one did.
    pub fn layer_search(&self) -> (Vec<PathBuf>, Option<&'static str>) {
        if self.var("VK_LAYER_PATH").is_some() {
            return (self.list("VK_LAYER_PATH"), Some("VK_LAYER_PATH"));
        }
        let mut paths = self.list("VK_ADD_LAYER_PATH");
        paths.extend(self.standard_dirs("explicit_layer.d"));
        (paths, None)
    }

    /// The folders `dlopen` searches for a bare library name when the
    /// `ldconfig` cache does not have it.
    fn library_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = self.list("LD_LIBRARY_PATH");
        let triple = if cfg!(target_arch = "aarch64") { "aarch64-linux-gnu" } else { "x86_64-linux-gnu" };
        for d in ["/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/local/lib"] {
            dirs.push(self.sys(d));
        }
        dirs.push(self.sys("/lib").join(triple));
        dirs.push(self.sys("/usr/lib").join(triple));
        dirs
    }

    /// Where a library the loader or the engine would `dlopen` is: a path
    /// (relative ones against `base`) must exist; a bare name is looked up in
    /// `LD_LIBRARY_PATH`, the `ldconfig` cache, then the standard folders.
    fn resolve_library(&self, name: &str, base: Option<&Path>) -> Option<PathBuf> {
        if name.contains('/') {
            let path = match base {
                Some(b) if Path::new(name).is_relative() => b.join(name),
                _ => PathBuf::from(name),
            };
            return path.is_file().then_some(path);
        }
        let in_dirs = |dirs: &[PathBuf]| dirs.iter().map(|d| d.join(name)).find(|p| p.is_file());
        in_dirs(&self.list("LD_LIBRARY_PATH"))
            .or_else(|| self.ldconfig.as_deref().and_then(|cache| ldconfig_lookup(cache, name)))
            .or_else(|| in_dirs(&self.library_dirs()))
    }

    /// The first executable file named `name` on `PATH` (or the default PATH).
    fn which(&self, name: &str) -> Option<PathBuf> {
        let dirs = match self.var("PATH") {
            Some(p) => split_paths(p),
            None => ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"].iter().map(|d| self.sys(d)).collect(),
        };
        dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
    }

    /// Debian or a derivative with apt-get at hand.
    pub fn debian(&self) -> bool {
        self.sys("/etc/debian_version").is_file() && self.which("apt-get").is_some()
    }
}

fn split_paths(list: &str) -> Vec<PathBuf> {
    list.split(':').filter(|p| !p.is_empty()).map(PathBuf::from).collect()
}

/// The path the `ldconfig -p` cache gives for `name`, for this machine's
/// architecture (a 32-bit library is no use to a 64-bit process).
fn ldconfig_lookup(cache: &str, name: &str) -> Option<PathBuf> {
    let arch = if cfg!(target_arch = "x86_64") {
        Some("x86-64")
    } else if cfg!(target_arch = "aarch64") {
        Some("AArch64")
    } else {
        None
    };
    cache.lines().find_map(|line| {
        let line = line.trim();
        let (lhs, path) = line.split_once(" => ")?;
        let (lib, flags) = lhs.split_once(' ').unwrap_or((lhs, ""));
        (lib == name && arch.is_none_or(|a| flags.contains(a))).then(|| PathBuf::from(path.trim()))
    })
}

fn is_root() -> bool {
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        if let Some(uid) = status.lines().find_map(|l| l.strip_prefix("Uid:")) {
            return uid.split_whitespace().nth(1) == Some("0");
        }
    }
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The manifests a search path names: a file itself, a folder's `*.json`
/// files (sorted, so the result does not depend on `readdir`).
fn manifests(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_file() {
            out.push(path.clone());
        } else if let Ok(entries) = std::fs::read_dir(path) {
            let mut files: Vec<PathBuf> =
                entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file()).collect();
            files.sort();
            out.extend(files);
        }
    }
    out
}

fn read_json(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// A driver manifest the loader could use: `ICD.library_path` resolves.
fn valid_driver(env: &Env, manifest: &Path) -> bool {
    let Some(json) = read_json(manifest) else { return false };
    json.pointer("/ICD/library_path").and_then(|p| p.as_str()).is_some_and(|lib| env.resolve_library(lib, manifest.parent()).is_some())
}

/// A layer manifest (`layer` or `layers`) that declares the Khronos
/// validation layer with a library that resolves.
fn has_validation_layer(env: &Env, manifest: &Path) -> bool {
    let Some(json) = read_json(manifest) else { return false };
    let layers: Vec<&serde_json::Value> = match (json.get("layer"), json.get("layers").and_then(|l| l.as_array())) {
        (Some(one), _) => vec![one],
        (None, Some(many)) => many.iter().collect(),
        (None, None) => Vec::new(),
    };
    layers.iter().any(|layer| {
        layer.get("name").and_then(|n| n.as_str()) == Some(VALIDATION_LAYER)
            && layer.get("library_path").and_then(|p| p.as_str()).is_some_and(|lib| env.resolve_library(lib, manifest.parent()).is_some())
    })
}

/// What discovery found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The loader library the engine will load.
    pub loader: Option<PathBuf>,
    /// Usable driver (ICD) manifests, in search order.
    pub drivers: Vec<PathBuf>,
    /// The manifest of the Khronos validation layer.
    pub validation_layer: Option<PathBuf>,
    /// `spirv-val` on PATH.
    pub spirv_val: Option<PathBuf>,
}

/// Finds the loader, drivers, validation layer and `spirv-val` in `env`.
pub fn discover(env: &Env) -> Found {
    let loader = match env.var(LOADER_VAR) {
        Some(lib) => env.resolve_library(lib, None),
        None => env.resolve_library(LOADER_LIBRARY, None),
    };
    let drivers = manifests(&env.driver_search().0).into_iter().filter(|m| valid_driver(env, m)).collect();
    let validation_layer = manifests(&env.layer_search().0).into_iter().find(|m| has_validation_layer(env, m));
    Found { loader, drivers, validation_layer, spirv_val: env.which("spirv-val") }
}

/// A thing a command uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    Loader,
    Driver,
    ValidationLayer,
    SpirvVal,
}

impl Component {
    fn what(self) -> &'static str {
        match self {
            Component::Loader => "the Vulkan loader",
            Component::Driver => "a Vulkan driver (lavapipe, a CPU driver, when there is no GPU driver)",
            Component::ValidationLayer => "the Khronos validation layer",
            Component::SpirvVal => "spirv-val (SPIR-V validation of the shaders)",
        }
    }
    /// The Debian/Ubuntu package that provides it.
    pub fn debian(self) -> &'static str {
        match self {
            Component::Loader => "libvulkan1",
            Component::Driver => "mesa-vulkan-drivers",
            Component::ValidationLayer => "vulkan-validationlayers",
            Component::SpirvVal => "spirv-tools",
        }
    }
    fn dnf(self) -> &'static str {
        match self {
            Component::Loader => "vulkan-loader",
            Component::Driver => "mesa-vulkan-drivers",
            Component::ValidationLayer => "vulkan-validation-layers",
            Component::SpirvVal => "spirv-tools",
        }
    }
    fn pacman(self) -> &'static str {
        match self {
            Component::Loader => "vulkan-icd-loader",
            Component::Driver => "vulkan-swrast",
            Component::ValidationLayer => "vulkan-validation-layers",
            Component::SpirvVal => "spirv-tools",
        }
    }
    fn found(self, found: &Found) -> bool {
        match self {
            Component::Loader => found.loader.is_some(),
            Component::Driver => !found.drivers.is_empty(),
            Component::ValidationLayer => found.validation_layer.is_some(),
            Component::SpirvVal => found.spirv_val.is_some(),
        }
    }
}

/// How much a command needs a component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Installed when missing; the command fails without it.
    Required,
    /// Never installed; a missing one is reported and the command goes on.
    Optional,
}

/// The loader and a driver: every command that renders.
pub const RENDER: &[(Component, Need)] = &[(Component::Loader, Need::Required), (Component::Driver, Need::Required)];
/// `run`: the samples validate where the layer is installed and run
/// without it where it is not (a note, not a warning, says so).
pub const RUN: &[(Component, Need)] =
    &[(Component::Loader, Need::Required), (Component::Driver, Need::Required), (Component::ValidationLayer, Need::Optional)];
/// `test` and `soak`: validation must be on.
pub const TEST: &[(Component, Need)] =
    &[(Component::Loader, Need::Required), (Component::Driver, Need::Required), (Component::ValidationLayer, Need::Required)];
/// `ci`: the tests plus the shader check's spirv-val.
pub const CI: &[(Component, Need)] = &[
    (Component::Loader, Need::Required),
    (Component::Driver, Need::Required),
    (Component::ValidationLayer, Need::Required),
    (Component::SpirvVal, Need::Required),
];

/// A component that is needed and was not found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing {
    pub component: Component,
    pub need: Need,
    /// Where it was looked for.
    pub why: String,
    /// Set when installing the package would not help: a variable sends the
    /// engine or the loader elsewhere; says which and what to do.
    pub blocked_by: Option<String>,
}

/// The one thing [`ensure`] does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Everything required is there (missing optional things are reported).
    Ready,
    /// Install these Debian packages with apt-get, then look again.
    Install(Vec<&'static str>),
    /// Something required is missing and will not be installed: why.
    Stop(Stop),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `PROXIMA_NO_INSTALL` is set.
    NoInstall,
    /// Not Debian, or no apt-get.
    NotDebian,
    /// Debian, but not root.
    NotRoot,
    /// A package would land where a variable keeps the loader from looking.
    Misdirected,
}

/// What is missing and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub found: Found,
    pub missing: Vec<Missing>,
    pub step: Step,
    debian: bool,
}

fn show(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "(nothing)".into();
    }
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// Why `component` is missing in `env`, and whether a package can fix it.
fn diagnose(env: &Env, component: Component) -> (String, Option<String>) {
    // Debian's packages put manifests here; a search without it will not see them.
    let reaches = |paths: &[PathBuf], kind: &str| paths.contains(&env.sys("/usr/share/vulkan").join(kind));
    match component {
        Component::Loader => match env.var(LOADER_VAR) {
            Some(lib) => (
                format!("{LOADER_VAR}={lib} does not name a library that exists"),
                Some(format!("point {LOADER_VAR} at a Vulkan loader library, or unset it to use the system's {LOADER_LIBRARY}")),
            ),
            None => (format!("{LOADER_LIBRARY} is not in LD_LIBRARY_PATH, the ldconfig cache or the standard library folders"), None),
        },
        Component::Driver => {
            let (paths, var) = env.driver_search();
            let why = format!("no usable driver manifest (an ICD JSON whose library_path exists) in {}", show(&paths));
            let blocked = (!reaches(&paths, "icd.d")).then(|| match var {
                Some(v) => format!("{v} replaces the loader's driver search and names no usable driver manifest; point it at one (e.g. /usr/share/vulkan/icd.d/lvp_icd.x86_64.json) or unset it"),
                None => "XDG_DATA_DIRS leaves out /usr/share, where the driver package puts its manifest; add /usr/share to it".into(),
            });
            (why, blocked)
        }
        Component::ValidationLayer => {
            let (paths, var) = env.layer_search();
            let why = format!("no manifest declaring {VALIDATION_LAYER} (with a library that exists) in {}", show(&paths));
            let blocked = (!reaches(&paths, "explicit_layer.d")).then(|| match var {
                Some(v) => format!("{v} replaces the loader's layer search and has no {VALIDATION_LAYER}; add /usr/share/vulkan/explicit_layer.d (or the SDK's layer folder) to it, or unset it"),
                None => "XDG_DATA_DIRS leaves out /usr/share, where the layer package puts its manifest; add /usr/share to it".into(),
            });
            (why, blocked)
        }
        Component::SpirvVal => ("spirv-val is not on PATH".into(), None),
    }
}

/// What to do so that `needs` are met in `env`. Pure: reads files, changes nothing.
pub fn plan(env: &Env, needs: &[(Component, Need)]) -> Plan {
    let found = discover(env);
    let missing: Vec<Missing> = needs
        .iter()
        .filter(|(c, _)| !c.found(&found))
        .map(|&(component, need)| {
            let (why, blocked_by) = diagnose(env, component);
            Missing { component, need, why, blocked_by }
        })
        .collect();
    let required: Vec<&Missing> = missing.iter().filter(|m| m.need == Need::Required).collect();
    let debian = env.debian();
    let step = if required.is_empty() {
        Step::Ready
    } else if env.no_install() {
        Step::Stop(Stop::NoInstall)
    } else if required.iter().any(|m| m.blocked_by.is_some()) {
        Step::Stop(Stop::Misdirected)
    } else if !debian {
        Step::Stop(Stop::NotDebian)
    } else if !env.root {
        Step::Stop(Stop::NotRoot)
    } else {
        Step::Install(required.iter().map(|m| m.component.debian()).collect())
    };
    Plan { found, missing, step, debian }
}

impl Plan {
    /// Missing things, one a line, with the reason.
    fn list(&self, need: Need) -> String {
        let mut s = String::new();
        for m in self.missing.iter().filter(|m| m.need == need) {
            let _ = writeln!(s, "  - {}: {}", m.component.what(), m.why);
            if let Some(fix) = &m.blocked_by {
                let _ = writeln!(s, "    {fix}");
            }
        }
        s
    }

    /// How to install `components` by hand on this machine.
    fn how_to_install(&self, components: &[Component]) -> String {
        let pkgs = |f: fn(Component) -> &'static str| components.iter().map(|c| f(*c)).collect::<Vec<_>>().join(" ");
        if self.debian {
            return format!("  sudo apt-get install {}\n", pkgs(Component::debian));
        }
        let mut s = format!(
            "  Debian/Ubuntu:  sudo apt-get install {}\n  Fedora (dnf):   sudo dnf install {}\n  Arch (pacman):  sudo pacman -S {}\n",
            pkgs(Component::debian),
            pkgs(Component::dnf),
            pkgs(Component::pacman)
        );
        s.push_str(
            "  Elsewhere: the LunarG Vulkan SDK (https://vulkan.lunarg.com/sdk/home) has the loader, the validation layer and spirv-val;\n  \
             source its setup-env.sh so VK_ADD_LAYER_PATH, LD_LIBRARY_PATH and PATH find them; the driver comes from your GPU vendor or Mesa (lavapipe)\n",
        );
        s
    }

    /// The report for `command` (`cargo xtask <command>`): what is missing,
    /// why, and what happens next. Empty when nothing is missing.
    pub fn message(&self, command: &str) -> String {
        let mut s = String::new();
        let optional: Vec<Component> = self.missing.iter().filter(|m| m.need == Need::Optional).map(|m| m.component).collect();
        if !optional.is_empty() {
            let _ = write!(
                s,
                "xtask: note: `cargo xtask {command}` goes on without (optional here, so not installed; nothing is wrong):\n{}to install:\n{}",
                self.list(Need::Optional),
                self.how_to_install(&optional)
            );
        }
        let needs = format!("`cargo xtask {command}` needs, and did not find:\n{}", self.list(Need::Required));
        match &self.step {
            Step::Ready => {}
            Step::Install(pkgs) => {
                let _ = writeln!(s, "xtask: {needs}xtask: installing {} with apt-get ({NO_INSTALL_VAR}=1 stops this)", pkgs.join(" "));
            }
            Step::Stop(stop) => {
                let reason = match stop {
                    Stop::NoInstall => format!("{NO_INSTALL_VAR} is set, so nothing is installed"),
                    Stop::NotDebian => "this is not Debian/Ubuntu with apt-get, so nothing is installed".into(),
                    Stop::NotRoot => "installing needs root, so nothing is installed".into(),
                    Stop::Misdirected => {
                        "nothing is installed: a package would not help while a variable points elsewhere (fix it as said above)".into()
                    }
                };
                let _ = writeln!(s, "xtask: {needs}xtask: {reason}");
                // Packages only for what a package can fix.
                let installable: Vec<Component> =
                    self.missing.iter().filter(|m| m.need == Need::Required && m.blocked_by.is_none()).map(|m| m.component).collect();
                if !installable.is_empty() {
                    let _ = write!(
                        s,
                        "to install {}by hand:\n{}",
                        if *stop == Stop::Misdirected { "the rest " } else { "" },
                        self.how_to_install(&installable)
                    );
                }
            }
        }
        s
    }
}

/// `apt-get update`, then `apt-get install` of `pkgs` without recommends,
/// non-interactive (root, Debian: the caller checked).
pub fn apt_get_install(pkgs: &[&str]) -> Result<(), String> {
    let update = Command::new("apt-get").args(["update", "-qq"]).status().map_err(|e| format!("running apt-get: {e}"))?;
    if !update.success() {
        return Err("apt-get update failed".into());
    }
    let status = Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(pkgs)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map_err(|e| format!("running apt-get: {e}"))?;
    if !status.success() {
        return Err(format!("apt-get install {} failed", pkgs.join(" ")));
    }
    Ok(())
}

/// Makes sure `needs` are met for `cargo xtask <command>`: reports missing
/// optional things, installs missing required ones when allowed (saying
/// what and why first), and fails, saying how to install them, otherwise.
pub fn ensure(command: &str, needs: &[(Component, Need)]) -> Result<(), String> {
    let plan = plan(&Env::from_process(), needs);
    eprint!("{}", plan.message(command));
    match plan.step {
        Step::Ready => Ok(()),
        Step::Stop(_) => Err(format!("missing what `cargo xtask {command}` needs (see above)")),
        Step::Install(pkgs) => {
            apt_get_install(&pkgs)?;
            let after = self::plan(&Env::from_process(), needs);
            if after.step != Step::Ready {
                eprint!("{}", after.message(command));
                return Err(format!("installed {}, but still missing what `cargo xtask {command}` needs", pkgs.join(" ")));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A scratch folder, removed on drop.
    struct Tree(PathBuf);

    impl Tree {
        fn new() -> Tree {
            static N: AtomicU32 = AtomicU32::new(0);
            let dir = std::env::temp_dir().join(format!("xtask-vulkan-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Tree(dir)
        }
        fn path(&self, rel: &str) -> PathBuf {
            self.0.join(rel)
        }
        fn file(&self, rel: &str, text: &str) -> PathBuf {
            let p = self.path(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            p
        }
        /// A Debian-looking root with apt-get and nothing of Vulkan.
        fn debian(&self) {
            self.file("etc/debian_version", "12.11\n");
            self.file("usr/bin/apt-get", "");
        }
        fn lavapipe(&self, dir: &str) -> PathBuf {
            let lib = self.file("usr/lib/x86_64-linux-gnu/libvulkan_lvp.so", "");
            self.file(&format!("{dir}/lvp_icd.x86_64.json"), &icd(&lib.display().to_string()))
        }
        fn validation(&self, dir: &str) -> PathBuf {
            self.file("usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so", "");
            self.file(&format!("{dir}/VkLayer_khronos_validation.json"), &layer(VALIDATION_LAYER, "libVkLayer_khronos_validation.so"))
        }
        fn loader(&self) -> PathBuf {
            self.file("usr/lib/x86_64-linux-gnu/libvulkan.so.1", "")
        }
        /// An environment rooted here: HOME and PATH inside, root user.
        fn env(&self, vars: &[(&str, &str)]) -> Env {
            let mut all: BTreeMap<String, String> = BTreeMap::new();
            all.insert("HOME".into(), self.path("home").display().to_string());
            all.insert("PATH".into(), self.path("usr/bin").display().to_string());
            for (k, v) in vars {
                all.insert(k.to_string(), v.to_string());
            }
            Env { vars: all, sysroot: self.0.clone(), ldconfig: None, root: true }
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn icd(lib: &str) -> String {
        format!(r#"{{"file_format_version": "1.0.0", "ICD": {{"library_path": "{lib}", "api_version": "1.3.230"}}}}"#)
    }

    fn layer(name: &str, lib: &str) -> String {
        format!(r#"{{"file_format_version": "1.2.0", "layer": {{"name": "{name}", "type": "GLOBAL", "library_path": "{lib}"}}}}"#)
    }

    /// A full Debian install in the standard folders.
    fn complete() -> Tree {
        let t = Tree::new();
        t.debian();
        t.loader();
        t.lavapipe("usr/share/vulkan/icd.d");
        t.validation("usr/share/vulkan/explicit_layer.d");
        t
    }

    #[test]
    fn a_complete_debian_install_needs_nothing() {
        let t = complete();
        let plan = plan(&t.env(&[]), TEST);
        assert_eq!(plan.step, Step::Ready, "{}", plan.message("test"));
        assert!(plan.missing.is_empty());
        assert_eq!(plan.found.drivers, vec![t.path("usr/share/vulkan/icd.d/lvp_icd.x86_64.json")]);
        assert_eq!(plan.found.validation_layer, Some(t.path("usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json")));
        assert_eq!(plan.found.loader, Some(t.path("usr/lib/x86_64-linux-gnu/libvulkan.so.1")));
        assert_eq!(plan.message("test"), "");
    }

    #[test]
    fn installs_only_what_is_missing() {
        let t = Tree::new();
        t.debian();
        t.loader();
        let plan = plan(&t.env(&[]), TEST);
        assert_eq!(plan.step, Step::Install(vec!["mesa-vulkan-drivers", "vulkan-validationlayers"]));
        let msg = plan.message("test");
        assert!(msg.contains("installing mesa-vulkan-drivers vulkan-validationlayers with apt-get"), "{msg}");
        assert!(msg.contains("a Vulkan driver") && msg.contains("icd.d"), "{msg}");
        assert!(!msg.contains("libvulkan1"), "{msg}");
    }

    #[test]
    fn no_install_plans_no_install_and_says_how() {
        let t = Tree::new();
        t.debian();
        let plan = plan(&t.env(&[(NO_INSTALL_VAR, "1")]), TEST);
        assert_eq!(plan.step, Step::Stop(Stop::NoInstall));
        let msg = plan.message("test");
        assert!(msg.contains("sudo apt-get install libvulkan1 mesa-vulkan-drivers vulkan-validationlayers"), "{msg}");
        assert!(msg.contains("PROXIMA_NO_INSTALL is set, so nothing is installed") && !msg.contains("installing"), "{msg}");
        // `0` and empty do not count as set.
        assert!(matches!(super::plan(&t.env(&[(NO_INSTALL_VAR, "0")]), TEST).step, Step::Install(_)));
        assert!(matches!(super::plan(&t.env(&[(NO_INSTALL_VAR, "")]), TEST).step, Step::Install(_)));
    }

    #[test]
    fn the_validation_layer_is_optional_for_run() {
        let t = Tree::new();
        t.debian();
        t.loader();
        t.lavapipe("usr/share/vulkan/icd.d");
        let run = plan(&t.env(&[]), RUN);
        assert_eq!(run.step, Step::Ready);
        assert_eq!(run.missing.len(), 1);
        let msg = run.message("run");
        // A note, not a warning: nothing `run` needs is missing.
        assert!(msg.contains("note") && !msg.contains("warn") && msg.contains("sudo apt-get install vulkan-validationlayers"), "{msg}");
        assert_eq!(plan(&t.env(&[]), TEST).step, Step::Install(vec!["vulkan-validationlayers"]));
        assert_eq!(plan(&t.env(&[]), RENDER).missing, vec![]);
    }

    #[test]
    fn env_paths_are_searched() {
        let t = Tree::new();
        t.debian();
        t.loader();
        // Driver via VK_DRIVER_FILES (a file), layer via VK_ADD_LAYER_PATH (a folder).
        let icd = t.lavapipe("opt/gpu/icd");
        t.validation("opt/sdk/layers");
        let env = t.env(&[
            ("VK_DRIVER_FILES", &icd.display().to_string()),
            ("VK_ADD_LAYER_PATH", &t.path("opt/sdk/layers").display().to_string()),
        ]);
        let plan = plan(&env, TEST);
        assert_eq!(plan.step, Step::Ready, "{}", plan.message("test"));
        assert_eq!(plan.found.drivers, vec![icd.clone()]);
        // VK_ICD_FILENAMES (a folder) works the same; VK_LAYER_PATH too.
        let env = t.env(&[
            ("VK_ICD_FILENAMES", &t.path("opt/gpu/icd").display().to_string()),
            ("VK_LAYER_PATH", &t.path("opt/sdk/layers").display().to_string()),
        ]);
        assert_eq!(super::plan(&env, TEST).step, Step::Ready);
    }

    #[test]
    fn user_and_local_folders_are_searched() {
        let t = Tree::new();
        t.debian();
        t.loader();
        t.lavapipe("home/.local/share/vulkan/icd.d");
        t.validation("usr/local/share/vulkan/explicit_layer.d");
        assert_eq!(plan(&t.env(&[]), TEST).step, Step::Ready);
        // /etc/vulkan and XDG_DATA_DIRS too.
        let t = Tree::new();
        t.debian();
        t.loader();
        t.lavapipe("etc/vulkan/icd.d");
        t.validation("opt/share/vulkan/explicit_layer.d");
        let dirs = format!("{}:{}", t.path("opt/share").display(), t.path("usr/share").display());
        assert_eq!(plan(&t.env(&[("XDG_DATA_DIRS", &dirs)]), TEST).step, Step::Ready);
        assert_eq!(plan(&t.env(&[]), TEST).step, Step::Install(vec!["vulkan-validationlayers"]));
    }

    #[test]
    fn broken_manifests_do_not_count() {
        let t = Tree::new();
        t.debian();
        t.loader();
        // A driver whose library is gone, a manifest that is not JSON, another layer.
        t.file("usr/share/vulkan/icd.d/gone.json", &icd("/usr/lib/nowhere/libvulkan_gone.so"));
        t.file("usr/share/vulkan/icd.d/junk.json", "{ not json");
        t.file("usr/share/vulkan/explicit_layer.d/other.json", &layer("VK_LAYER_MESA_overlay", "libVkLayer_MESA_overlay.so"));
        t.file("usr/lib/libVkLayer_MESA_overlay.so", "");
        let plan = plan(&t.env(&[]), TEST);
        assert_eq!(plan.step, Step::Install(vec!["mesa-vulkan-drivers", "vulkan-validationlayers"]));
        assert!(plan.found.drivers.is_empty());
        // A manifest with a relative library path resolves against its folder.
        t.file("usr/share/vulkan/icd.d/lib/libvulkan_rel.so", "");
        t.file("usr/share/vulkan/icd.d/rel.json", &icd("./lib/libvulkan_rel.so"));
        assert_eq!(super::plan(&t.env(&[]), RENDER).step, Step::Ready);
    }

    #[test]
    fn the_loader_comes_from_ldconfig_or_proxima_vulkan_loader() {
        let t = Tree::new();
        t.debian();
        t.lavapipe("usr/share/vulkan/icd.d");
        let mut env = t.env(&[]);
        assert_eq!(plan(&env, RENDER).step, Step::Install(vec!["libvulkan1"]));
        let lib = t.file("opt/vk/libvulkan.so.1", "");
        env.ldconfig = Some(format!("2 libs found in cache\n\tlibvulkan.so.1 (libc6,x86-64) => {}\n", lib.display()));
        let found = plan(&env, RENDER);
        assert_eq!(found.found.loader, Some(lib.clone()));
        assert_eq!(found.step, Step::Ready);

        // PROXIMA_VULKAN_LOADER names the library the engine loads: found if it exists ...
        let own = t.file("opt/mine/libvulkan-custom.so", "");
        let env = t.env(&[(LOADER_VAR, &own.display().to_string())]);
        assert_eq!(plan(&env, RENDER).found.loader, Some(own));
        // ... and if it does not, installing libvulkan1 would not help.
        let env = t.env(&[(LOADER_VAR, "/nowhere/libvulkan.so.1")]);
        let p = plan(&env, RENDER);
        assert_eq!(p.step, Step::Stop(Stop::Misdirected));
        let msg = p.message("run");
        assert!(msg.contains(LOADER_VAR) && !msg.contains("install libvulkan1"), "{msg}");
    }

    #[test]
    fn an_override_that_hides_the_standard_folders_is_reported_not_installed_over() {
        let t = complete();
        let env = t.env(&[("VK_DRIVER_FILES", &t.path("nowhere").display().to_string())]);
        let p = plan(&env, RENDER);
        assert_eq!(p.step, Step::Stop(Stop::Misdirected));
        assert!(p.message("test").contains("VK_DRIVER_FILES replaces"), "{}", p.message("test"));
        let env = t.env(&[("VK_LAYER_PATH", &t.path("nowhere").display().to_string())]);
        assert_eq!(plan(&env, TEST).step, Step::Stop(Stop::Misdirected));
        // VK_ADD_LAYER_PATH adds; the standard folders still count.
        let env = t.env(&[("VK_ADD_LAYER_PATH", &t.path("nowhere").display().to_string())]);
        assert_eq!(plan(&env, TEST).step, Step::Ready);
    }

    #[test]
    fn off_debian_it_says_how_and_installs_nothing() {
        let t = Tree::new();
        t.loader();
        t.lavapipe("usr/share/vulkan/icd.d");
        let p = plan(&t.env(&[]), TEST);
        assert_eq!(p.step, Step::Stop(Stop::NotDebian));
        let msg = p.message("test");
        for expect in [
            "sudo dnf install vulkan-validation-layers",
            "sudo pacman -S vulkan-validation-layers",
            "LunarG",
            "apt-get install vulkan-validationlayers",
        ] {
            assert!(msg.contains(expect), "{expect:?} in {msg}");
        }
        // Debian without root: the apt-get line, nothing installed.
        t.debian();
        let mut env = t.env(&[]);
        env.root = false;
        let p = plan(&env, TEST);
        assert_eq!(p.step, Step::Stop(Stop::NotRoot));
        assert!(p.message("test").contains("sudo apt-get install vulkan-validationlayers"));
    }

    #[test]
    fn spirv_val_is_found_on_path() {
        let t = complete();
        assert_eq!(plan(&t.env(&[]), CI).step, Step::Install(vec!["spirv-tools"]));
        t.file("usr/bin/spirv-val", "");
        assert_eq!(plan(&t.env(&[]), CI).step, Step::Ready);
    }

    #[test]
    fn ldconfig_lines_of_another_architecture_do_not_count() {
        let cache = "\tlibvulkan.so.1 (libc6) => /usr/lib/i386-linux-gnu/libvulkan.so.1\n\tlibvulkan.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libvulkan.so.1\n";
        if cfg!(target_arch = "x86_64") {
            assert_eq!(ldconfig_lookup(cache, "libvulkan.so.1"), Some(PathBuf::from("/lib/x86_64-linux-gnu/libvulkan.so.1")));
            assert_eq!(ldconfig_lookup("\tlibvulkan.so.1 (libc6) => /usr/lib/i386-linux-gnu/libvulkan.so.1\n", "libvulkan.so.1"), None);
        }
        assert_eq!(ldconfig_lookup(cache, "libvulkan.so"), None);
    }
}
