//! CLI tier: the real `grundy` binary (and `grundy-server` where the judge needs a separate
//! server), driven through `support/process.rs`, every run bounded in time.
//!
//! - `judge`: the golden files of `tests/data/` (`GRUNDY_BLESS=1 cargo test --test cli --
//!   judge:: explained::` re-records them), malformed inputs, pipes, `--max-message-bytes`;
//! - `misere`: `--misere` judged by the brute force of `support/misere_oracle.rs`;
//! - `servers`: `--server`: servers down, killed, behind TLS; connection settings;
//! - `explained`: `--explain` moves played out, and `grundy analyse`'s lines;
//! - `fuzz_judge`: mutated judge files through the library's readers and the CLI, judged by
//!   `support/judge_model.rs`;
//! - `render`: `grundy render`'s SVG and DOT;
//! - `docs`: every path `docs/architecture.md` names exists.
//!
//! One binary for all of them, so that the crate is linked once for them.

#[path = "../support/mod.rs"]
mod support;

mod docs;
mod explained;
mod fuzz_judge;
mod judge;
mod misere;
mod render;
mod servers;
