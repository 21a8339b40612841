//! Engine tier: the library's game engine through its public API, without a server.
//!
//! - `props`: token sliding judged by the brute-force oracle of `support/oracle.rs` (property
//!   tests from a fixed seed);
//! - `split_props`: the Addition-Subtraction game judged by `support/split_oracle.rs` alike;
//! - `misere`: misère play judged by the brute force of `support/misere_oracle.rs`;
//! - `paths`: the fast paths against the plain ones and the oracle, and cooperative
//!   cancellation;
//! - `remoteness`: remoteness and position analysis judged by a retrograde oracle over every
//!   position of 1 to 3 tokens;
//! - `scale`: deep and large graphs, and the memory `analyse` takes (this binary's global
//!   allocator counts it, per thread).
//!
//! One binary for all of them, so that the crate is linked once for them.

#[path = "../support/mod.rs"]
mod support;

mod misere;
mod paths;
mod props;
mod remoteness;
mod scale;
mod split_props;
