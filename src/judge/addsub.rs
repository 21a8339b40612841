//! The LA 4411 / UVa 12163 (Addition-Subtraction Game) judge format, read as a stream of events.
//!
//! `T`, then `T` games: `V E`, `E` edges `u v`, `V` split counts, `R`, then `R` rounds of `V`
//! values each. Any whitespace separates numbers. See `docs/games.md` for the game and a
//! sample.

use std::io::Read;

use super::error::{JudgeError, Location};
use super::scanner::Scanner;

/// One step of a judge file.
#[derive(Debug, PartialEq, Eq)]
pub enum AddsubEvent<'a> {
    /// A new game (endpoints checked to be in range; cycles are the engine's to report).
    Game {
        /// 1-based game number.
        game: u64,
        /// Where the game starts (its `V`).
        location: Location,
        /// `V`.
        vertex_count: u32,
        /// The `E` edges `u -> v`, in input order.
        edges: Vec<(u32, u32)>,
        /// `K_0..K_{V-1}`.
        split_counts: Vec<u32>,
        /// `R`: the rounds that follow.
        rounds: u64,
    },
    /// One round, as the vertices whose value is odd, in increasing order. The values
    /// themselves are read and checked (each a number up to `u64::MAX`), but only their parity
    /// is kept: two units on a vertex cancel (see `docs/games.md`), so a round's verdict
    /// depends on nothing else.
    Round(&'a [u32]),
    /// The last round of the current game was read.
    EndOfGame,
}

enum State {
    /// Before the `T` line.
    Start,
    /// Between games; `remaining` games still to read.
    BetweenGames {
        remaining: u64,
    },
    /// Inside a game with `rounds_left` rounds to read and `games_left` games after it.
    InGame {
        vertex_count: u32,
        rounds_left: u64,
        games_left: u64,
    },
    Done,
}

/// Pull parser over an LA 4411 judge file.
pub struct AddsubReader<R> {
    scanner: Scanner<R>,
    state: State,
    games: u64,
    odd_vertices: Vec<u32>,
}

impl<R: Read> AddsubReader<R> {
    /// A reader at the start of a judge file.
    pub fn new(reader: R) -> Self {
        Self::with_scanner(Scanner::new(reader))
    }

    fn with_scanner(scanner: Scanner<R>) -> Self {
        Self {
            scanner,
            state: State::Start,
            games: 0,
            odd_vertices: Vec::new(),
        }
    }

    /// Whether the next event can start without reading (see
    /// `Scanner::has_buffered_input`).
    pub fn has_buffered_input(&mut self) -> bool {
        self.scanner.has_buffered_input()
    }

    /// The next event, or `None` after the last game. Data after the last game is an error.
    pub fn next_event(&mut self) -> Result<Option<AddsubEvent<'_>>, JudgeError> {
        loop {
            match self.state {
                State::Start => {
                    let (count, _) = self.scanner.number("the number of games T")?;
                    self.state = State::BetweenGames { remaining: count };
                }
                State::BetweenGames { remaining: 0 } => {
                    self.state = State::Done;
                }
                State::BetweenGames { remaining } => return self.read_game(remaining - 1),
                State::InGame {
                    vertex_count,
                    rounds_left,
                    games_left,
                } => {
                    if rounds_left == 0 {
                        self.state = State::BetweenGames {
                            remaining: games_left,
                        };
                        return Ok(Some(AddsubEvent::EndOfGame));
                    }
                    self.read_round(vertex_count)?;
                    self.state = State::InGame {
                        vertex_count,
                        rounds_left: rounds_left - 1,
                        games_left,
                    };
                    return Ok(Some(AddsubEvent::Round(&self.odd_vertices)));
                }
                State::Done => {
                    return match self.scanner.next_number("nothing after the last game")? {
                        None => Ok(None),
                        Some((_, location)) => Err(JudgeError::syntax(
                            location,
                            format!("unexpected data after the last game (T = {})", self.games),
                        )),
                    };
                }
            }
        }
    }

    /// Reads a round's `vertex_count` values into `odd_vertices`. Each vertex is written at
    /// the end of the list found so far, which grows only past an odd one: no branch on a
    /// parity, which is random in judge files.
    fn read_round(&mut self, vertex_count: u32) -> Result<(), JudgeError> {
        let odd_vertices = &mut self.odd_vertices;
        odd_vertices.clear();
        odd_vertices.resize(vertex_count as usize, 0);
        let (mut vertex, mut odd) = (0u32, 0usize);
        let read =
            self.scanner
                .read_parities(u64::from(vertex_count), "a vertex value", |is_odd| {
                    odd_vertices[odd] = vertex;
                    odd += usize::from(is_odd);
                    vertex += 1;
                });
        odd_vertices.truncate(odd);
        read
    }

    fn read_game(&mut self, games_left: u64) -> Result<Option<AddsubEvent<'_>>, JudgeError> {
        let (vertex_count, location) = self.scanner.number("the number of vertices V")?;
        if vertex_count == 0 || vertex_count > u64::from(u32::MAX) {
            return Err(JudgeError::syntax(
                location,
                format!(
                    "the number of vertices V is {vertex_count}, expected 1..={}",
                    u32::MAX
                ),
            ));
        }
        let vertex_count = vertex_count as u32;
        let (edge_count, _) = self
            .scanner
            .bounded("the number of edges E", u64::from(u32::MAX))?;
        let mut edges = Vec::with_capacity((edge_count as usize).min(1 << 20));
        for _ in 0..edge_count {
            let from = self
                .scanner
                .vertex("an edge's source vertex", vertex_count)?;
            let to = self
                .scanner
                .vertex("an edge's target vertex", vertex_count)?;
            edges.push((from, to));
        }
        let mut split_counts = Vec::with_capacity((vertex_count as usize).min(1 << 20));
        for _ in 0..vertex_count {
            let (k, _) = self
                .scanner
                .bounded("a split count K", u64::from(u32::MAX))?;
            split_counts.push(k as u32);
        }
        let (rounds, _) = self.scanner.number("the number of rounds R")?;
        self.games += 1;
        self.state = State::InGame {
            vertex_count,
            rounds_left: rounds,
            games_left,
        };
        Ok(Some(AddsubEvent::Game {
            game: self.games,
            location,
            vertex_count,
            edges,
            split_counts,
            rounds,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(input: &str) -> Result<Vec<String>, String> {
        super::super::debug_events!(AddsubReader::new(input.as_bytes()))
    }

    #[test]
    fn reads_games_and_rounds() {
        let out = events("2\n2 1\n0 1\n1 0\n2\n1 0\n3 3\n1 0\n0\n0\n").unwrap();
        assert_eq!(out.len(), 6, "{out:?}");
        assert!(out[0].contains("edges: [(0, 1)]"));
        assert_eq!(out[1], "Round([0])");
        assert_eq!(out[2], "Round([0, 1])");
        assert_eq!(out[3], "EndOfGame");
        assert!(out[4].contains("game: 2"));
        assert_eq!(out[5], "EndOfGame");
    }

    #[test]
    fn errors_name_line_and_column() {
        assert_eq!(
            events("1\n2 1\n0 2\n").unwrap_err(),
            "line 3, column 3: an edge's target vertex is 2, out of range: vertices are 0 to 1"
        );
        assert_eq!(
            events("1\n1 0\n0\n1\n").unwrap_err(),
            "line 5, column 1: expected a vertex value, found end of input"
        );
        assert_eq!(
            events("1\n1 0\n0\n0\n7\n").unwrap_err(),
            "line 5, column 1: unexpected data after the last game (T = 1)"
        );
    }
}
