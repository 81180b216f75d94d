// The tone-mapping pass: one fullscreen triangle reads the HDR scene color
// (linear, RGBA16F) texel for texel and writes the 8-bit sRGB output (the
// target's format encodes; this shader outputs linear values in 0..1).
// Push constants: the exposure (linear multiplier), the curve
// (`r.Tonemapper`: 0 = none, clamped; 1 = ACES fitted; 2 = AgX; 3 =
// Khronos PBR Neutral) and whether the exposure is auto exposure's
// (renderer/src/postprocess/exposure.rs: the view state's multiplier in
// binding 2) rather than the push constant's.

struct TonemapPush {
    exposure: f32,
    tonemapper: u32,
    adapted: u32,
    pad1: u32,
}

// `view_state.rs`'s EXPOSURE_STATE_SIZE (`auto_exposure.wgsl`'s ExposureState).
struct ExposureState {
    multiplier: f32,
    ev100: f32,
    valid: u32,
    target_ev100: f32,
}

@group(0) @binding(0) var scene_color: texture_2d<f32>;
@group(0) @binding(2) var<storage, read> exposure_state: ExposureState;
var<immediate> tonemap: TonemapPush;

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    // (-1,-1), (3,-1), (-1,3): one triangle covering the viewport.
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

// Stephen Hill's fit of the ACES reference rendering and output transforms
// (RRT + sRGB ODT), as in UE's filmic tone mapper before its own curve:
// into the ACES working space (with the RRT's desaturation), the fitted
// curve, back to linear sRGB.
fn aces_fitted(c: vec3<f32>) -> vec3<f32> {
    // WGSL matrices are column-major: these are the transposes of the
    // row-major originals, so `m * v` is the original's row-by-vector product.
    let input = mat3x3<f32>(
        vec3<f32>(0.59719, 0.07600, 0.02840),
        vec3<f32>(0.35458, 0.90834, 0.13383),
        vec3<f32>(0.04823, 0.01566, 0.83777),
    );
    let output = mat3x3<f32>(
        vec3<f32>(1.60475, -0.10208, -0.00327),
        vec3<f32>(-0.53108, 1.10813, -0.07276),
        vec3<f32>(-0.07367, -0.00605, 1.07602),
    );
    let v = input * c;
    let a = v * (v + 0.0245786) - 0.000090537;
    let b = v * (0.983729 * v + 0.4329510) + 0.238081;
    return clamp(output * (a / b), vec3<f32>(0.0), vec3<f32>(1.0));
}

// AgX (Troy Sobotka; Blender 4's default view transform), as Benjamin
// Wrensch's minimal fit: the inset matrix, log2 encoding over
// [-12.47393, 4.026069] EV, a polynomial fit of the default contrast
// sigmoid, the outset matrix. The sigmoid's output is display-encoded for
// a 2.2 gamma; raised to 2.2 it is linear again for the sRGB target.
fn agx(c: vec3<f32>) -> vec3<f32> {
    // Columns, as GLSL's mat3 constructor takes them in the original.
    let inset = mat3x3<f32>(
        vec3<f32>(0.842479062253094, 0.0423282422610123, 0.0423756549057051),
        vec3<f32>(0.0784335999999992, 0.878468636469772, 0.0784336),
        vec3<f32>(0.0792237451477643, 0.0791661274605434, 0.879142973793104),
    );
    let outset = mat3x3<f32>(
        vec3<f32>(1.19687900512017, -0.0528968517574562, -0.0529716355144438),
        vec3<f32>(-0.0980208811401368, 1.15190312990417, -0.0980434501171241),
        vec3<f32>(-0.0990297440797205, -0.0989611768448433, 1.15107367264116),
    );
    let min_ev = -12.47393;
    let max_ev = 4.026069;
    let v = inset * max(c, vec3<f32>(1e-10));
    let x = (clamp(log2(v), vec3<f32>(min_ev), vec3<f32>(max_ev)) - min_ev) / (max_ev - min_ev);
    let x2 = x * x;
    let x4 = x2 * x2;
    let curve = 15.5 * x4 * x2 - 40.14 * x4 * x + 31.96 * x4 - 6.868 * x2 * x + 0.4298 * x2 + 0.1191 * x - 0.00232;
    let display = clamp(outset * curve, vec3<f32>(0.0), vec3<f32>(1.0));
    return pow(display, vec3<f32>(2.2));
}

// Khronos PBR Neutral (the glTF viewers' tone mapper for colour fidelity):
// colours below 0.76 pass through (less a small offset that lifts near
// blacks), brighter ones compress towards white and desaturate a little.
fn pbr_neutral(c: vec3<f32>) -> vec3<f32> {
    let start_compression = 0.8 - 0.04;
    let desaturation = 0.15;
    let x = min(c.r, min(c.g, c.b));
    let offset = select(0.04, x - 6.25 * x * x, x < 0.08);
    var color = c - offset;
    let peak = max(color.r, max(color.g, color.b));
    if (peak < start_compression) {
        return color;
    }
    let d = 1.0 - start_compression;
    let new_peak = 1.0 - d * d / (peak + d - start_compression);
    color *= new_peak / peak;
    let g = 1.0 - 1.0 / (desaturation * (peak - new_peak) + 1.0);
    return mix(color, vec3<f32>(new_peak), g);
}

@fragment
fn fs_main(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let texel = textureLoad(scene_color, vec2<i32>(position.xy), 0);
    // Half floats overflow to infinity; keep the curve finite.
    let exposure = select(tonemap.exposure, exposure_state.multiplier, tonemap.adapted != 0u);
    let hdr = clamp(texel.rgb * exposure, vec3<f32>(0.0), vec3<f32>(65504.0));
    var ldr = clamp(hdr, vec3<f32>(0.0), vec3<f32>(1.0));
    // Each curve in a loop that runs once or not at all: lavapipe runs an
    // untaken branch's body (masked), not a loop that does not start.
    for (var i = 0u; i < u32(tonemap.tonemapper == 1u); i++) {
        ldr = aces_fitted(hdr);
    }
    for (var i = 0u; i < u32(tonemap.tonemapper == 2u); i++) {
        ldr = agx(hdr);
    }
    for (var i = 0u; i < u32(tonemap.tonemapper == 3u); i++) {
        ldr = clamp(pbr_neutral(hdr), vec3<f32>(0.0), vec3<f32>(1.0));
    }
    return vec4<f32>(ldr, clamp(texel.a, 0.0, 1.0));
}
