//! Misère play on a chess judge file: how many queries theory settles (at most one movable
//! token), how many the sum search settles, how many go over the default budgets, and the
//! time of the whole file (engine only, one thread).
//!
//! `cargo run --release --example misere_cost -- FILE`; `docs/performance.md` quotes it on
//! the README's `examples/chess.in`.

use std::time::Instant;

use grundy::engine::{AnalysisOptions, Digraph, Game, Limits, MisereError, analyse};
use grundy::judge::chess::{ChessEvent, ChessReader};

fn main() {
    let path = std::env::args().nth(1).expect("a chess judge file");
    let file = std::fs::File::open(&path).expect("a readable file");
    let mut reader = ChessReader::new(std::io::BufReader::new(file));
    let options = AnalysisOptions {
        max_moves: 0,
        ..AnalysisOptions::default()
    };
    let (mut theory, mut searched, mut over, mut positions) = (0u64, 0u64, 0u64, 0u64);
    let started = Instant::now();
    let mut analysis = None;
    while let Some(event) = reader.next_event().expect("a well-formed file") {
        match event {
            ChessEvent::Graph {
                vertex_count,
                out_degrees,
                targets,
                ..
            } => {
                let graph = Digraph::from_out_degrees(vertex_count, &out_degrees, targets).unwrap();
                analysis = Some(analyse(Game::token_sliding(graph), &Limits::default()).unwrap());
            }
            ChessEvent::Query(tokens) => {
                let analysis = analysis.as_ref().expect("a graph before its queries");
                let by_theory = analysis.misere_settled_by_theory(tokens);
                match analysis.analyse_position_misere(tokens, &options) {
                    Ok(answer) if by_theory => {
                        debug_assert_eq!(answer.positions_searched, 0);
                        theory += 1;
                    }
                    Ok(answer) => {
                        searched += 1;
                        positions += answer.positions_searched;
                    }
                    Err(MisereError::OverBudget(_)) => over += 1,
                    Err(error) => panic!("{error}"),
                }
            }
            ChessEvent::EndOfCase => {}
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{path}: {theory} queries settled by theory, {searched} by search ({positions} \
         positions), {over} over the default budgets; {:.3} ms",
        seconds * 1e3
    );
}
