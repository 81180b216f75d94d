//! Layout tests for structs shared by Rust and WGSL: naga lays out the
//! WGSL struct (the offsets and sizes the GPU reads) and
//! [`assert_wgsl_layout!`](crate::assert_wgsl_layout) compares them with the
//! Rust struct's `offset_of!`/`size_of`, member by member, by name. A field
//! added, moved or resized on one side only fails the test instead of
//! shading with the wrong bytes.

/// One member of a WGSL struct: its name, byte offset and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    pub offset: u32,
    pub size: u32,
    /// A runtime-sized array (the last member of a storage block): a Rust
    /// header struct may stop before it.
    pub runtime_array: bool,
}

/// A WGSL struct's layout: its members in order and its size (stride).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructLayout {
    pub members: Vec<Member>,
    pub size: u32,
}

/// The layout of the struct `name` declared in `wgsl` (which must parse on
/// its own). Errors name what failed.
pub fn struct_layout(wgsl: &str, name: &str) -> Result<StructLayout, String> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| format!("the WGSL does not parse: {}", e.emit_to_string(wgsl)))?;
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).map_err(|e| format!("naga cannot lay the types out: {e:?}"))?;
    let (handle, ty) =
        module.types.iter().find(|(_, t)| t.name.as_deref() == Some(name)).ok_or_else(|| format!("no struct {name} in the WGSL"))?;
    let naga::TypeInner::Struct { members, span } = &ty.inner else { return Err(format!("{name} is not a struct")) };
    let _ = handle;
    let members = members
        .iter()
        .map(|m| Member {
            name: m.name.clone().unwrap_or_default(),
            offset: m.offset,
            size: layouter[m.ty].size,
            runtime_array: matches!(module.types[m.ty].inner, naga::TypeInner::Array { size: naga::ArraySize::Dynamic, .. }),
        })
        .collect();
    Ok(StructLayout { members, size: *span })
}

/// The size of a field, from an accessor (`field_size(|t: &T| &t.field)`).
pub fn field_size<T, F>(_: fn(&T) -> &F) -> u32 {
    std::mem::size_of::<F>() as u32
}

/// Compares the WGSL struct's members with the Rust struct's fields of the
/// same names: the same names in the same order, each at the same offset
/// with the same size, and the Rust struct at least as large as the WGSL
/// one (a uniform block may be padded past it on the Rust side). `rust` is
/// (name, offset, size) per field, in declaration order; fields whose name
/// starts with `_` are padding the WGSL side has no member for. A Rust
/// struct without the WGSL block's runtime-sized array is the block's
/// header: it must end where the array starts.
pub fn compare(wgsl: &StructLayout, rust: &[(&str, u32, u32)], rust_size: u32) -> Result<(), String> {
    let rust: Vec<&(&str, u32, u32)> = rust.iter().filter(|(n, _, _)| !n.starts_with('_')).collect();
    let tail = wgsl.members.last().filter(|m| m.runtime_array && !rust.iter().any(|(n, _, _)| *n == m.name));
    let members: Vec<&Member> = wgsl.members.iter().filter(|m| !m.name.starts_with('_') && Some(*m) != tail).collect();
    let wgsl_names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let rust_names: Vec<&str> = rust.iter().map(|(n, _, _)| *n).collect();
    if wgsl_names != rust_names {
        return Err(format!("members differ: WGSL {wgsl_names:?}, Rust {rust_names:?}"));
    }
    for (m, (name, offset, size)) in members.iter().zip(&rust) {
        if (m.offset, m.size) != (*offset, *size) {
            return Err(format!("{name}: WGSL offset {} size {}, Rust offset {offset} size {size}", m.offset, m.size));
        }
    }
    match tail {
        Some(array) if rust_size != array.offset => {
            Err(format!("the Rust header is {rust_size} bytes; the WGSL block's {} starts at {}", array.name, array.offset))
        }
        None if rust_size < wgsl.size => Err(format!("the Rust struct is {rust_size} bytes, the WGSL one {}", wgsl.size)),
        _ => Ok(()),
    }
}

/// `assert_wgsl_layout!(RustType, wgsl_source, "WgslName", [field, …])`:
/// the WGSL struct `WgslName` in `wgsl_source` and `RustType` lay out the
/// listed fields (every field of both, in order) at the same offsets with
/// the same sizes ([`compare`]).
#[macro_export]
macro_rules! assert_wgsl_layout {
    ($ty:ty, $wgsl:expr, $name:expr, [$($field:ident),* $(,)?]) => {{
        let wgsl = $crate::wgsl_layout::struct_layout($wgsl, $name).unwrap_or_else(|e| panic!("{}: {e}", $name));
        let rust = [$((stringify!($field), ::std::mem::offset_of!($ty, $field) as u32, $crate::wgsl_layout::field_size(|t: &$ty| &t.$field))),*];
        if let Err(e) = $crate::wgsl_layout::compare(&wgsl, &rust, ::std::mem::size_of::<$ty>() as u32) {
            panic!("{} (Rust {}) does not match its WGSL layout: {e}", $name, stringify!($ty));
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C)]
    struct Good {
        a: [f32; 4],
        b: u32,
        c: f32,
        _pad: [f32; 2],
    }

    #[repr(C)]
    struct Moved {
        b: u32,
        a: [f32; 4],
    }

    const WGSL: &str = "struct S { a: vec4<f32>, b: u32, c: f32 }";

    #[test]
    fn matching_layouts_pass_and_a_moved_field_fails() {
        let s = struct_layout(WGSL, "S").unwrap();
        assert_eq!(s.size, 32, "vec4 + two scalars, rounded up to the vec4's alignment");
        assert_eq!(s.members[1], Member { name: "b".into(), offset: 16, size: 4, runtime_array: false });
        assert_wgsl_layout!(Good, WGSL, "S", [a, b, c, _pad]);
        let moved = [("a", std::mem::offset_of!(Moved, a) as u32, 16), ("b", 0, 4)];
        assert!(compare(&s, &moved, 20).unwrap_err().contains("members differ"));
        let shifted = [("a", 0, 16), ("b", 20, 4), ("c", 24, 4)];
        assert!(compare(&s, &shifted, 32).unwrap_err().contains("b: WGSL offset 16"));
        assert!(struct_layout(WGSL, "T").is_err());
    }

    #[test]
    fn a_header_ends_where_the_runtime_array_starts() {
        let s = struct_layout("struct B { n: u32, pad: u32, items: array<vec2<f32>> }", "B").unwrap();
        assert!(s.members[2].runtime_array);
        assert_eq!(compare(&s, &[("n", 0, 4), ("pad", 4, 4)], 8), Ok(()));
        assert!(compare(&s, &[("n", 0, 4), ("pad", 4, 4)], 16).unwrap_err().contains("starts at 8"));
    }
}
