//! The POJ 2425 ("A Chess Game") judge format, read as a stream of events.
//!
//! Test cases follow each other until end of input. A test case is `N`, then for each vertex
//! `X_i` and its `X_i` out-neighbours, then query lines `M p_1 .. p_M` until a `0`. Any
//! whitespace separates numbers. See `docs/games.md` for the game and a sample.

use std::io::Read;

use super::error::{JudgeError, Location};
use super::scanner::{LARGE_GRAPH_BUFFER_BYTES, ListBudget, Scanner};
use crate::engine::graph::MAX_EDGES;

/// Largest vertex count accepted (vertex ids are `u32`).
const MAX_VERTICES: u64 = u32::MAX as u64;

/// Graphs of at least this many vertices are read through a larger buffer.
const LARGE_GRAPH_VERTICES: u32 = 1 << 16;

/// One step of a judge file.
#[derive(Debug, PartialEq, Eq)]
pub enum ChessEvent<'a> {
    /// A new test case's graph, in the wire's CSR form (checked: every target in range, at
    /// most the engine's edge limit).
    Graph {
        /// 1-based test case number.
        case: u64,
        /// Where the test case starts.
        location: Location,
        /// `N`.
        vertex_count: u32,
        /// `X_i` of each vertex.
        out_degrees: Vec<u32>,
        /// The out-neighbour lists, concatenated.
        targets: Vec<u32>,
    },
    /// A query: the token vertices (validated to be in range).
    Query(&'a [u32]),
    /// The `0` line that ends the current test case.
    EndOfCase,
}

/// Pull parser over a POJ 2425 judge file.
pub struct ChessReader<R> {
    scanner: Scanner<R>,
    /// Vertex count of the current test case; `None` between test cases.
    vertex_count: Option<u32>,
    cases: u64,
    tokens: Vec<u32>,
}

impl<R: Read> ChessReader<R> {
    /// A reader at the start of a judge file.
    pub fn new(reader: R) -> Self {
        Self::with_scanner(Scanner::new(reader))
    }

    fn with_scanner(scanner: Scanner<R>) -> Self {
        Self {
            scanner,
            vertex_count: None,
            cases: 0,
            tokens: Vec::new(),
        }
    }

    /// Whether the next event can start without reading (see
    /// `Scanner::has_buffered_input`).
    pub fn has_buffered_input(&mut self) -> bool {
        self.scanner.has_buffered_input()
    }

    /// The next event, or `None` at a clean end of input (between test cases).
    pub fn next_event(&mut self) -> Result<Option<ChessEvent<'_>>, JudgeError> {
        let Some(vertex_count) = self.vertex_count else {
            return self.read_graph();
        };
        let (token_count, _) = self
            .scanner
            .number("the number of tokens M of a query, or 0 to end the test case")?;
        if token_count == 0 {
            self.vertex_count = None;
            return Ok(Some(ChessEvent::EndOfCase));
        }
        self.tokens.clear();
        let tokens = &mut self.tokens;
        self.scanner
            .read_vertices(token_count, vertex_count, "a token position", |v| {
                tokens.push(v)
            })?;
        Ok(Some(ChessEvent::Query(&self.tokens)))
    }

    /// Reads the queries of the current test case that are already buffered, as many as fit
    /// in `budget`, appending their token counts to `counts` and their tokens to `vertices`
    /// (the packed form); returns how many. 0 between test cases, before the `0` that ends
    /// one, and before any query it cannot take in one pass: [`ChessReader::next_event`]
    /// reads that one (and reports what is wrong with it). The same queries either way.
    pub fn read_buffered_queries(
        &mut self,
        budget: ListBudget,
        counts: &mut Vec<u32>,
        vertices: &mut Vec<u32>,
    ) -> usize {
        match self.vertex_count {
            Some(vertex_count) => {
                self.scanner
                    .read_buffered_lists(vertex_count, budget, counts, vertices)
            }
            None => 0,
        }
    }

    fn read_graph(&mut self) -> Result<Option<ChessEvent<'_>>, JudgeError> {
        let what = "the number of vertices N";
        let Some((vertex_count, location)) = self.scanner.next_number(what)? else {
            return Ok(None);
        };
        if vertex_count == 0 || vertex_count > MAX_VERTICES {
            return Err(JudgeError::syntax(
                location,
                format!("{what} is {vertex_count}, expected 1..={MAX_VERTICES}"),
            ));
        }
        let vertex_count = vertex_count as u32;
        // Capacity is capped: N comes from untrusted input.
        let mut out_degrees = Vec::with_capacity((vertex_count as usize).min(1 << 20));
        let mut targets = Vec::new();
        if vertex_count >= LARGE_GRAPH_VERTICES {
            self.scanner.grow_buffer(LARGE_GRAPH_BUFFER_BYTES);
        }
        while out_degrees.len() < vertex_count as usize {
            // The lists already buffered, in one pass; then one the careful way (a list
            // crossing the buffer's end, or anything wrong, which it reports).
            let budget = ListBudget {
                lists: vertex_count as usize - out_degrees.len(),
                // A target costs one: the edge limit is the budget.
                bytes: MAX_EDGES - targets.len() as u64,
                list_bytes: 0,
                item_bytes: 1,
                min_list: 0,
                max_list: u64::from(u32::MAX),
            };
            self.scanner
                .read_buffered_lists(vertex_count, budget, &mut out_degrees, &mut targets);
            if out_degrees.len() == vertex_count as usize {
                break;
            }
            let (degree, location) = self
                .scanner
                .bounded("the out-degree X of a vertex", u64::from(u32::MAX))?;
            if targets.len() as u64 + degree > MAX_EDGES {
                return Err(JudgeError::syntax(
                    location,
                    format!("the test case has more than {MAX_EDGES} edges"),
                ));
            }
            out_degrees.push(degree as u32);
            self.scanner
                .read_vertices(degree, vertex_count, "an out-neighbour", |v| {
                    targets.push(v)
                })?;
        }
        self.cases += 1;
        self.vertex_count = Some(vertex_count);
        Ok(Some(ChessEvent::Graph {
            case: self.cases,
            location,
            vertex_count,
            out_degrees,
            targets,
        }))
    }
}

#[cfg(test)]
mod tests;
