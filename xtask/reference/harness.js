// Renders the model `cargo xtask reference` serves with the Khronos glTF
// Sample Viewer's engine (@khronosgroup/gltf-viewer) and posts the pixels
// back. xtask has already added the camera and the one directional light
// to the model's JSON (`/model/...`); this page only picks them and turns
// off everything the Proxima side does not have:
// no image-based lighting or environment, no generated lights, no tone
// mapping (the viewer's "None": linear, clamped, then pow(1/2.2), which
// xtask re-encodes to exact sRGB), no skinning or morphing (Proxima skips
// them), a fixed background colour, no anti-aliasing (Proxima has none).
//
// Protocol (all POSTs to the page's own server):
//   GET  /config.json  { width, height, model_url, scene_index, camera_index, background }
//   POST /log          one line of console output (warnings and errors)
//   POST /result       width*height*4 bytes of RGBA, rows top to bottom
//   POST /fail         the error that stopped the render

import { GltfView, GltfState } from "/viewer/gltf-viewer.module.js";

const post = (path, body) => fetch(path, { method: "POST", body });

for (const level of ["warn", "error"]) {
    const original = console[level];
    console[level] = (...args) => {
        post("/log", `console.${level}: ${args.map(String).join(" ")}`);
        original.apply(console, args);
    };
}
window.addEventListener("error", (e) => post("/log", `error: ${e.message} (${e.filename}:${e.lineno})`));

const nextFrame = () => new Promise((resolve) => setTimeout(resolve, 0));

async function main() {
    const config = await (await fetch("/config.json")).json();
    const { width, height } = config;
    const canvas = document.getElementById("canvas");
    canvas.width = width;
    canvas.height = height;
    const gl = canvas.getContext("webgl2", { antialias: false, alpha: false, depth: true, preserveDrawingBuffer: true });
    if (!gl) {
        throw new Error("no WebGL 2 context (Chromium needs --use-angle=swiftshader --enable-unsafe-swiftshader without a GPU)");
    }
    post("/log", `info: ${gl.getParameter(gl.VERSION)}; renderer ${gl.getParameter(gl.RENDERER)}`);

    const view = new GltfView(gl);
    const state = view.createState();
    const loader = view.createResourceLoader(undefined, undefined, "/viewer/libs/");
    state.gltf = await loader.loadGltf(config.model_url);
    state.sceneIndex = config.scene_index;
    state.cameraIndex = config.camera_index;
    state.animationIndices = [];
    // The renderer binds the environment's textures whether or not IBL is
    // on, and fails without an environment; this one has no textures, so
    // nothing is bound, and with useIBL off the shader has no IBL term
    // (USE_IBL undefined) and u_EnvIntensity is 0. (Sheen's albedo-scaling
    // LUT and transmission's background come from the environment too:
    // models with KHR_materials_sheen or _transmission are not references
    // of their own features here.)
    state.environment = {
        textures: [], images: [], samplers: [],
        diffuseEnvMap: { index: 0 }, specularEnvMap: { index: 0 }, lut: { index: 0 },
        sheenEnvMap: { index: 0 }, sheenLUT: { index: 0 }, sheenELUT: { index: 0 },
        mipCount: 1, iblIntensityScale: 0,
    };

    const p = state.renderingParameters;
    p.useIBL = false;
    p.iblIntensity = 0.0;
    p.renderEnvironmentMap = false;
    p.blurEnvironmentMap = false;
    p.usePunctual = true;
    p.useDirectionalLightsWithDisabledIBL = false;
    p.toneMap = GltfState.ToneMaps.NONE;
    p.exposure = 1.0;
    p.debugOutput = GltfState.DebugOutput.NONE;
    p.clearColor = config.background;
    p.skinning = false;
    p.morphing = false;

    // A few frames first: shaders compile and textures finish uploading
    // on the first ones.
    for (let i = 0; i < 3; i++) {
        view.renderFrame(state, width, height);
        await nextFrame();
    }
    view.renderFrame(state, width, height);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    const pixels = new Uint8Array(width * height * 4);
    gl.readPixels(0, 0, width, height, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    // WebGL's rows run bottom to top; the PNG's top to bottom.
    const flipped = new Uint8Array(pixels.length);
    const row = width * 4;
    for (let y = 0; y < height; y++) {
        flipped.set(pixels.subarray((height - 1 - y) * row, (height - y) * row), y * row);
    }
    await post("/result", flipped);
}

main().catch((e) => post("/fail", String((e && e.stack) || e)));
