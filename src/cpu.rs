//! The one processor probe: which optional instruction sets the vector paths may use. Every
//! run-time feature check of the crate is here, asked once and cached; a vector path asks
//! this module, never the processor.
//!
//! `GRUNDY_PORTABLE=1` in the environment turns every vector path off, so that the portable
//! code can be run (and timed, and tested) on any machine; it is read here, once, and nowhere
//! else.

use std::sync::OnceLock;

/// The optional instruction sets this processor has and the vector paths may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Features {
    /// SSSE3 (the byte shuffle) and POPCNT: the short varints of `wire::shuffled`.
    pub(crate) ssse3: bool,
}

impl Features {
    /// No vector path: the portable code everywhere.
    pub(crate) const PORTABLE: Self = Self { ssse3: false };

    /// The features to use given the value of `GRUNDY_PORTABLE` (`None` when unset): none
    /// when it is set to anything but `0` or nothing, else what the processor has.
    fn detect(portable: Option<&std::ffi::OsStr>) -> Self {
        if portable.is_some_and(|value| !value.is_empty() && value != "0") {
            return Self::PORTABLE;
        }
        Self::of_processor()
    }

    #[cfg(target_arch = "x86_64")]
    fn of_processor() -> Self {
        Self {
            ssse3: std::arch::is_x86_feature_detected!("ssse3")
                && std::arch::is_x86_feature_detected!("popcnt"),
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn of_processor() -> Self {
        Self::PORTABLE
    }
}

/// The features the vector paths may use in this process (asked once).
pub(crate) fn features() -> Features {
    static FEATURES: OnceLock<Features> = OnceLock::new();
    *FEATURES.get_or_init(|| Features::detect(std::env::var_os("GRUNDY_PORTABLE").as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grundy_portable_turns_every_vector_path_off() {
        for value in ["1", "yes"] {
            let value = std::ffi::OsStr::new(value);
            assert_eq!(Features::detect(Some(value)), Features::PORTABLE);
        }
        // Unset, empty or 0: what the processor has.
        let processor = Features::of_processor();
        for value in [None, Some(""), Some("0")] {
            assert_eq!(Features::detect(value.map(std::ffi::OsStr::new)), processor);
        }
    }

    #[test]
    fn this_process_reads_the_switch() {
        let portable = std::env::var_os("GRUNDY_PORTABLE");
        assert_eq!(features(), Features::detect(portable.as_deref()));
    }
}
