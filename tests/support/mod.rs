//! Shared test support. `oracle`: brute-force game solver used to judge the engine.

pub mod oracle;
