#!/usr/bin/env bash
# The check to run when a machine with an NVIDIA GPU is lent (the `device`
# tool; CI never has one): every sample headless on the real driver, then the
# GPU tests of rhi-vulkan and renderer, printing each sample's device,
# validation counts and frame times. Stats files and PNGs go to $OUT (the
# device tool's output folder) or target/device-check.
#
# Here, before the call: build what travels, and fetch the Vulkan loader
# (the device tool's README):
#   cargo build --release -p samples --bins
#   echo /.gl/ >>.git/info/exclude; mkdir -p .gl /tmp/amd64/partial
#   o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
#   apt-get $o update; (cd .gl && apt-get $o download libvulkan1)
# The call: `run` with carry [".gl", "target/release/<each sample>"] and the
# command `bash tools/device-check.sh`. Without cargo there, the GPU tests are
# skipped (said so); with it they run in release.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-target/device-check}"
mkdir -p "$out"
# The loader, where it was carried and is missing.
if ! ldconfig -p 2>/dev/null | grep -q libvulkan.so.1 && ls .gl/*.deb >/dev/null 2>&1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
# NVIDIA's driver manifest where the loader does not find it by itself.
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$nvidia_icd" ]; then
    export VK_DRIVER_FILES="$nvidia_icd"
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
bin=target/release
status=0
# name and its options: a few frames each, at 1280x720 (lights at its own
# scale), so the frame times mean something.
samples=(
    "hello --frames 30"
    "many-cubes --frames 60"
    "lights --frames 30"
    "procmesh --frames 30"
    "instancing --frames 30"
    "particles --frames 30"
    "materials --frames 30"
    "gltf --frames 30"
    "many-foxes --frames 30"
    "showcase --frames 60"
)
printf '%-12s %-34s %-10s %-8s %-8s %-10s %-10s\n' sample device validation errors warnings frame_ms gpu_ms
for entry in "${samples[@]}"; do
    name="${entry%% *}"
    args="${entry#* }"
    if [ ! -x "$bin/$name" ]; then
        echo "$name: not built ($bin/$name missing: cargo build --release -p samples --bins, and carry it)"
        continue
    fi
    # shellcheck disable=SC2086
    if ! "$bin/$name" --headless $args --width 1280 --height 720 --out "$out/$name.png" --stats "$out/$name.json" \
        >"$out/$name.log" 2>&1; then
        echo "$name: FAILED (exit $?); last lines of $out/$name.log:"
        tail -5 "$out/$name.log"
        status=1
        continue
    fi
    python3 - "$out/$name.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
v, t = s["validation"], s.get("mean_timings_ms") or s["timings_ms"]
print(f'{s["sample"]:<12} {s["device"][:34]:<34} {"on" if v["enabled"] else "off":<10} {v["errors"]:<8} {v["warnings"]:<8} '
      f'{t.get("frame", 0):<10.3f} {t.get("gpu", 0):<10.3f}')
PY
done
if command -v cargo >/dev/null; then
    echo "== GPU tests (rhi-vulkan, renderer) on the real driver"
    RUST_TEST_THREADS=1 cargo test --release -p proxima-rhi-vulkan -p proxima-renderer 2>&1 | grep -E "^test result|FAILED|panicked" || status=1
else
    echo "== GPU tests skipped: no cargo on this machine (the samples above ran)"
fi
exit $status
