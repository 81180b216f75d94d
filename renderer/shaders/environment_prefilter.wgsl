// The environment's prefiltering (renderer/src/environment/gpu.rs), run
// once per environment: `specular` fills one level of the prefiltered
// specular cube (into `texels`, copied into the cube after), `irradiance`
// projects the source onto nine spherical-harmonic coefficients of
// irradiance / pi. The source is an equirectangular image with its full
// mip chain (directions: renderer/src/environment/mod.rs).

struct Params {
    // This level's face size in texels.
    face_size: u32,
    // Its first texel in `texels` (each texel two words: rgba16f).
    first_texel: u32,
    // GGX samples per texel (0: the mirror reflection).
    samples: u32,
    // The source level `irradiance` reads.
    sh_level: u32,
    // Perceptual roughness (alpha = roughness²).
    roughness: f32,
    // The solid angle of one texel of the source's level 0 (4 pi / texels).
    source_texel_solid_angle: f32,
    // The source's mip levels.
    source_levels: f32,
    _pad: f32,
}

var<immediate> p: Params;
@group(0) @binding(0) var source: texture_2d<f32>;
@group(0) @binding(1) var source_sampler: sampler;
@group(0) @binding(2) var<storage, read_write> texels: array<u32>;
@group(0) @binding(3) var<storage, read_write> sh: array<vec4<f32>, 9>;

const PI: f32 = 3.14159265;

// Equirectangular coordinates of unit direction `d`.
fn equirect_uv(d: vec3<f32>) -> vec2<f32> {
    return vec2<f32>(0.5 - atan2(d.y, d.x) / (2.0 * PI), acos(clamp(d.z, -1.0, 1.0)) / PI);
}

fn equirect_direction(uv: vec2<f32>) -> vec3<f32> {
    let phi = PI * (1.0 - 2.0 * uv.x);
    let theta = PI * uv.y;
    return vec3<f32>(sin(theta) * cos(phi), sin(theta) * sin(phi), cos(theta));
}

// The direction through (u, v) of cube face `face` (rhi-vulkan's
// `TextureDimension::Cube` mapping).
fn cube_direction(face: u32, uv: vec2<f32>) -> vec3<f32> {
    let s = 2.0 * uv.x - 1.0;
    let t = 2.0 * uv.y - 1.0;
    switch face {
        case 0u: { return vec3<f32>(1.0, -t, -s); }
        case 1u: { return vec3<f32>(-1.0, -t, s); }
        case 2u: { return vec3<f32>(s, 1.0, t); }
        case 3u: { return vec3<f32>(s, -1.0, -t); }
        case 4u: { return vec3<f32>(s, -t, 1.0); }
        default: { return vec3<f32>(-s, -t, -1.0); }
    }
}

// The source's radiance towards `d` from the level whose texels cover
// `solid_angle` steradians.
fn source_radiance(d: vec3<f32>, solid_angle: f32) -> vec3<f32> {
    let lod = clamp(0.5 * log2(max(solid_angle / p.source_texel_solid_angle, 1e-8)), 0.0, p.source_levels - 1.0);
    return textureSampleLevel(source, source_sampler, equirect_uv(d), lod).rgb;
}

// The IEEE half float nearest to `x` (>= 0, clamped to the largest finite
// half), as bits: naga needs a capability for pack2x16float that the
// device does not offer.
fn half_bits(x: f32) -> u32 {
    let b = bitcast<u32>(clamp(x, 0.0, 65504.0));
    let e = i32((b >> 23u) & 0xffu) - 112;
    let m = b & 0x7fffffu;
    if (e <= 0) {
        // Subnormal halves (below 2^-14), rounded half up; below 2^-25, 0.
        let shift = u32(min(1 - e, 31));
        let full = (m | 0x800000u) >> min(shift, 31u);
        return select((full + 0x1000u) >> 13u, 0u, e < -10);
    }
    return ((u32(e) << 10u) | (m >> 13u)) + ((m >> 12u) & 1u);
}

fn hammersley(i: u32, n: u32) -> vec2<f32> {
    return vec2<f32>(f32(i) / f32(n), f32(reverseBits(i)) * 2.3283064e-10);
}

@compute @workgroup_size(8, 8, 1)
fn specular(@builtin(global_invocation_id) id: vec3<u32>) {
    let size = p.face_size;
    if (id.x >= size || id.y >= size) {
        return;
    }
    let n = normalize(cube_direction(id.z, (vec2<f32>(id.xy) + 0.5) / f32(size)));
    // A cube texel's solid angle, about 4 pi / (6 size²).
    let texel_solid_angle = 4.0 * PI / (6.0 * f32(size * size));
    var color = source_radiance(n, texel_solid_angle) * f32(p.samples == 0u);
    // GGX importance sampling around n with v = n (the split sum's
    // assumption), weighted by n.l; each sample reads the source level
    // whose texels match its share of the lobe's solid angle.
    let a = max(p.roughness * p.roughness, 1e-4);
    let a2 = a * a;
    let up = select(vec3<f32>(0.0, 0.0, 1.0), vec3<f32>(1.0, 0.0, 0.0), abs(n.z) > 0.999);
    let tx = normalize(cross(up, n));
    let ty = cross(n, tx);
    var sum = vec3<f32>(0.0);
    var weight = 0.0;
    for (var i = 0u; i < p.samples; i++) {
        let xi = hammersley(i, p.samples);
        let phi = 2.0 * PI * xi.x;
        let cos_theta = sqrt((1.0 - xi.y) / (1.0 + (a2 - 1.0) * xi.y));
        let sin_theta = sqrt(max(1.0 - cos_theta * cos_theta, 0.0));
        let h = normalize(tx * (sin_theta * cos(phi)) + ty * (sin_theta * sin(phi)) + n * cos_theta);
        let l = 2.0 * dot(n, h) * h - n;
        let n_dot_l = dot(n, l);
        if (n_dot_l > 0.0) {
            let d = (cos_theta * a2 - cos_theta) * cos_theta + 1.0;
            let pdf = a2 / (PI * d * d) / 4.0;
            let sample_solid_angle = 1.0 / (f32(p.samples) * pdf);
            sum += source_radiance(l, sample_solid_angle * 2.0) * n_dot_l;
            weight += n_dot_l;
        }
    }
    color += sum / max(weight, 1e-6) * f32(p.samples > 0u);
    let index = p.first_texel + (id.z * size + id.y) * size + id.x;
    texels[2u * index] = half_bits(color.r) | (half_bits(color.g) << 16u);
    texels[2u * index + 1u] = half_bits(color.b) | (half_bits(1.0) << 16u);
}

// The real spherical harmonics of bands 0-2 at unit direction `d`.
fn sh_basis(d: vec3<f32>, i: u32) -> f32 {
    switch i {
        case 0u: { return 0.282095; }
        case 1u: { return 0.488603 * d.y; }
        case 2u: { return 0.488603 * d.z; }
        case 3u: { return 0.488603 * d.x; }
        case 4u: { return 1.092548 * d.x * d.y; }
        case 5u: { return 1.092548 * d.y * d.z; }
        case 6u: { return 0.315392 * (3.0 * d.z * d.z - 1.0); }
        case 7u: { return 1.092548 * d.x * d.z; }
        default: { return 0.546274 * (d.x * d.x - d.y * d.y); }
    }
}

var<workgroup> partial: array<array<vec4<f32>, 9>, 64>;

@compute @workgroup_size(64)
fn irradiance(@builtin(local_invocation_index) t: u32) {
    let dims = textureDimensions(source, p.sh_level);
    var c: array<vec4<f32>, 9>;
    for (var k = 0u; k < 9u; k++) {
        c[k] = vec4<f32>(0.0);
    }
    // Each thread a share of the level's texels, each weighted by its
    // solid angle (2 pi / w)(pi / h) sin(theta).
    let texel_count = dims.x * dims.y;
    for (var i = t; i < texel_count; i += 64u) {
        let xy = vec2<u32>(i % dims.x, i / dims.x);
        let uv = (vec2<f32>(xy) + 0.5) / vec2<f32>(dims);
        let d = equirect_direction(uv);
        let solid_angle = (2.0 * PI / f32(dims.x)) * (PI / f32(dims.y)) * sin(PI * uv.y);
        let radiance = textureLoad(source, vec2<i32>(xy), i32(p.sh_level)).rgb * solid_angle;
        for (var k = 0u; k < 9u; k++) {
            c[k] += vec4<f32>(radiance * sh_basis(d, k), 0.0);
        }
    }
    partial[t] = c;
    workgroupBarrier();
    if (t == 0u) {
        // The cosine lobe's convolution per band (pi, 2 pi / 3, pi / 4),
        // over pi: irradiance / pi, the radiance a white Lambert surface
        // returns.
        for (var k = 0u; k < 9u; k++) {
            var s = vec4<f32>(0.0);
            for (var j = 0u; j < 64u; j++) {
                s += partial[j][k];
            }
            let band = select(select(0.25, 2.0 / 3.0, k < 4u), 1.0, k == 0u);
            sh[k] = s * band;
        }
    }
}
