//! Shared test support, compiled into every test binary that declares `mod support;`. Each
//! binary uses part of it, hence the `dead_code` allowances.
//!
//! - `oracle`: brute-force game solver used to judge the engine (token sliding);
//! - `misere_oracle`: a brute-force solver of token sliding under misère play, from the rules
//!   alone;
//! - `split_oracle`: its Addition-Subtraction counterpart;
//! - `properties`: the plumbing between the engine and the oracles in the engine's tests;
//! - `server`: an in-process server on `127.0.0.1:0` and request builders; `http1`: raw
//!   HTTP/1.1 exchanges with it;
//! - `judge_model`: an independent model of the judge formats (the fuzz tier's oracle);
//! - `random_games`: random graphs for the engine's property tests, and their configuration;
//! - `process`: bounded runs of the real binaries, children killed on drop;
//! - `replica`: `grundy-server` processes for the fleet tests, ready when SERVING;
//! - `tls`: a test CA with server and client certificates (rcgen), and a scratch directory.

#[allow(dead_code)]
pub mod http1;
#[allow(dead_code)]
pub mod judge_model;
#[allow(dead_code)]
pub mod misere_oracle;
#[allow(dead_code)]
pub mod oracle;
#[allow(dead_code)]
pub mod process;
#[allow(dead_code)]
pub mod properties;
#[allow(dead_code)]
pub mod random_games;
#[allow(dead_code)]
pub mod replica;
#[allow(dead_code)]
pub mod server;
#[allow(dead_code)]
pub mod split_oracle;
#[allow(dead_code)]
pub mod tls;
