//! Engine tier: the library's game engine through its public API, without a server.
//!
//! - `props`: the engine judged by the brute-force oracle of `support/oracle.rs` (property
//!   tests from a fixed seed);
//! - `paths`: the fast paths against the plain ones and the oracle, and cooperative
//!   cancellation;
//! - `remoteness`: remoteness and position analysis judged by a retrograde oracle over every
//!   position of 1 to 3 tokens;
//! - `scale`: deep and large graphs, and the memory `analyse` takes (this binary's global
//!   allocator counts it, per thread).
//!
//! One binary for the three, so that the crate is linked once for them.

#[path = "../support/mod.rs"]
mod support;

mod paths;
mod props;
mod remoteness;
mod scale;
