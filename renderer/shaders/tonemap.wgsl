// The tone-mapping pass: one fullscreen triangle reads the HDR scene color
// (linear, RGBA16F) texel for texel and writes the 8-bit sRGB output (the
// target's format encodes; this shader outputs linear values in 0..1).
// Push constants: the exposure (linear multiplier) and the curve
// (`r.Tonemapper`: 0 = none, clamped; 1 = ACES fitted).

struct TonemapPush {
    exposure: f32,
    tonemapper: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var scene_color: texture_2d<f32>;
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

@fragment
fn fs_main(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let texel = textureLoad(scene_color, vec2<i32>(position.xy), 0);
    // Half floats overflow to infinity; keep the curve finite.
    let hdr = clamp(texel.rgb * tonemap.exposure, vec3<f32>(0.0), vec3<f32>(65504.0));
    var ldr = clamp(hdr, vec3<f32>(0.0), vec3<f32>(1.0));
    if (tonemap.tonemapper == 1u) {
        ldr = aces_fitted(hdr);
    }
    return vec4<f32>(ldr, clamp(texel.a, 0.0, 1.0));
}
