//! Fleet tier: several `grundy-server` processes (`support/replica.rs`).
//!
//! - `shared_store`: replicas sharing a Redis store (ignored by a plain `cargo test`: they
//!   need Redis), a `--store-dir` server killed and restarted, an unreachable Redis;
//! - `failover`: `grundy judge --server A,B,C` while replicas are killed and restarted.
//!
//! `scripts/fleet-test.sh` runs this binary against a real Redis
//! (`scripts/with-redis.sh cargo test --test fleet -- --include-ignored`); plain `cargo test`
//! runs the rest, each replica then on its own store.

#[path = "../support/mod.rs"]
mod support;

mod failover;
mod shared_store;
