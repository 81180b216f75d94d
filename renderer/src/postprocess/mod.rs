//! Post-processing: full-screen passes recorded after every main view's mesh
//! passes, reading the HDR scene color. The mesh passes light in linear HDR
//! (`SCENE_COLOR_FORMAT`, RGBA16F) so that bright lights and emissive
//! materials keep their ratios past 1.0; only here is light turned into the
//! 8-bit sRGB image that is read back and presented
//! ([`tonemap::OUTPUT_FORMAT`]).

pub mod tonemap;
