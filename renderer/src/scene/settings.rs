//! Per-primitive render settings a component sets (UE copies them from
//! `UPrimitiveComponent` into every `FPrimitiveSceneProxy`: MinDrawDistance,
//! MaxDrawDistance, TranslucencySortPriority). Here the scene keeps them,
//! not the proxy, so every kind of primitive has them without each proxy
//! storing copies, and changing one is a scene update — no proxy rebuild,
//! no command rebuild.

/// A primitive's draw distances and translucency sort priority.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrimitiveRenderSettings {
    /// Closer than this to a view (its bounds' centre, as UE measures it)
    /// the primitive is not drawn in that view; 0: no minimum.
    pub min_draw_distance: f32,
    /// Beyond this distance from a view (to its bounding sphere) the
    /// primitive is not drawn in that view (UE's MaxDrawDistance); 0: no
    /// limit. The view's own limit (`SceneView::max_draw_distance`) applies
    /// too. Neither limit applies to the shadow view.
    pub max_draw_distance: f32,
    /// Translucency draws by this ascending, then back to front (UE's
    /// TranslucencySortPriority): a higher priority draws over the others
    /// whatever their distances.
    pub translucency_sort_priority: i16,
}

impl Default for PrimitiveRenderSettings {
    fn default() -> Self {
        Self { min_draw_distance: 0.0, max_draw_distance: 0.0, translucency_sort_priority: 0 }
    }
}

impl PrimitiveRenderSettings {
    /// Why these settings cannot be used, if they cannot: distances must be
    /// finite and non-negative, and the minimum below a maximum that is set.
    pub fn invalid_reason(&self) -> Option<String> {
        let (min, max) = (self.min_draw_distance, self.max_draw_distance);
        if !(min.is_finite() && min >= 0.0) {
            return Some(format!("min draw distance {min} is not a finite distance >= 0"));
        }
        if !(max.is_finite() && max >= 0.0) {
            return Some(format!("max draw distance {max} is not a finite distance >= 0 (0: no limit)"));
        }
        if max > 0.0 && min >= max {
            return Some(format!("min draw distance {min} is not below the max draw distance {max}"));
        }
        None
    }

    /// Whether either draw distance is set (culling reads them only then).
    pub(crate) fn has_draw_distance(&self) -> bool {
        self.min_draw_distance > 0.0 || self.max_draw_distance > 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_validate_their_distances() {
        let ok = |min, max| PrimitiveRenderSettings { min_draw_distance: min, max_draw_distance: max, translucency_sort_priority: -4 };
        assert_eq!(ok(0.0, 0.0).invalid_reason(), None);
        assert_eq!(ok(5.0, 0.0).invalid_reason(), None, "a minimum without a maximum");
        assert_eq!(ok(5.0, 6.0).invalid_reason(), None);
        for bad in [ok(-1.0, 0.0), ok(f32::NAN, 0.0), ok(0.0, -2.0), ok(0.0, f32::INFINITY), ok(6.0, 5.0), ok(5.0, 5.0)] {
            assert!(bad.invalid_reason().is_some(), "{bad:?}");
        }
        assert!(!PrimitiveRenderSettings::default().has_draw_distance());
        assert!(ok(1.0, 0.0).has_draw_distance() && ok(0.0, 1.0).has_draw_distance());
    }
}
