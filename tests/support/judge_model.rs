//! An independent model of the two judge formats, for the fuzz tier (`tests/cli/fuzz_judge.rs`).
//!
//! It is written the simple way, as a test oracle should be: the whole input in memory, split
//! into whitespace-separated tokens first, each token's line and column computed from a table
//! of line starts, then the grammar walked over the token list. It predicts, for any input,
//! the events the streaming readers of `src/judge/` must produce, and the first error they
//! must report: its location and a keyword of its message. It also tells the role of every
//! token it read (so that mutations can aim at vertex ids) and where each event ends (so that
//! the verdicts before a mutation can be compared with those of the unmutated file).

/// The two judge formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Chess,
    Addsub,
}

impl Format {
    /// The `grundy judge` subcommand.
    pub fn name(self) -> &'static str {
        match self {
            Format::Chess => "chess",
            Format::Addsub => "addsub",
        }
    }
}

/// A 1-based line and byte column, as the readers report them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub line: u64,
    pub column: u64,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// One event of a judge file, in a form common to the model and the real readers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A chess test case's graph (CSR form), starting at `place`.
    Graph {
        place: Place,
        out_degrees: Vec<u32>,
        targets: Vec<u32>,
    },
    /// An addsub game, starting at `place`.
    Game {
        place: Place,
        vertex_count: u32,
        edges: Vec<(u32, u32)>,
        split_counts: Vec<u32>,
        rounds: u64,
    },
    /// A chess query.
    Query(Vec<u32>),
    /// An addsub round: the vertices whose value is odd.
    Round(Vec<u32>),
    /// The end of a chess test case or an addsub game.
    End,
}

impl Event {
    /// How many stdout lines `grundy judge` prints for this event: a verdict per query or
    /// round, a `Game#g:` header per game and a blank line after it.
    pub fn output_lines(&self, format: Format) -> usize {
        match (self, format) {
            (Event::Query(_) | Event::Round(_) | Event::Game { .. }, _) => 1,
            (Event::End, Format::Addsub) => 1,
            _ => 0,
        }
    }
}

/// The first error the readers must report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedError {
    pub place: Place,
    /// A word or phrase the message must contain.
    pub keyword: &'static str,
}

/// What a token was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A vertex id, valid below `vertex_count`.
    Vertex { vertex_count: u64 },
    /// Any other number.
    Number,
}

/// A token the model read: its byte range and role.
#[derive(Debug, Clone, Copy)]
pub struct ReadToken {
    pub start: usize,
    pub end: usize,
    pub role: Role,
}

/// The model's account of one input.
#[derive(Debug, Default)]
pub struct Parse {
    /// Every event, each with the byte offset just after its last token (0 if it read none).
    pub events: Vec<(Event, usize)>,
    pub error: Option<ExpectedError>,
    pub tokens: Vec<ReadToken>,
}

/// Parses `input` the simple way.
pub fn parse(format: Format, input: &[u8]) -> Parse {
    let mut model = Model::new(input);
    let result = match format {
        Format::Chess => model.chess(),
        Format::Addsub => model.addsub(),
    };
    Parse {
        events: model.events,
        error: result.err(),
        tokens: model.read,
    }
}

/// The separators of the judge formats.
pub fn is_separator(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// (start, end) of every whitespace-separated token.
pub fn token_spans(input: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < input.len() {
        if is_separator(input[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < input.len() && !is_separator(input[i]) {
            i += 1;
        }
        spans.push((start, i));
    }
    spans
}

struct Model<'a> {
    input: &'a [u8],
    /// (start, end) of every token.
    tokens: Vec<(usize, usize)>,
    next: usize,
    line_starts: Vec<usize>,
    events: Vec<(Event, usize)>,
    read: Vec<ReadToken>,
    /// End of the last token read.
    last_end: usize,
}

type Step<T> = Result<T, ExpectedError>;

const U32_MAX: u64 = u32::MAX as u64;

impl<'a> Model<'a> {
    fn new(input: &'a [u8]) -> Self {
        let tokens = token_spans(input);
        let line_starts = std::iter::once(0)
            .chain(
                input
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        Model {
            input,
            tokens,
            next: 0,
            line_starts,
            events: Vec::new(),
            read: Vec::new(),
            last_end: 0,
        }
    }

    fn place(&self, offset: usize) -> Place {
        let line = self.line_starts.partition_point(|&s| s <= offset);
        Place {
            line: line as u64,
            column: (offset - self.line_starts[line - 1] + 1) as u64,
        }
    }

    fn fail<T>(&self, offset: usize, keyword: &'static str) -> Step<T> {
        Err(ExpectedError {
            place: self.place(offset),
            keyword,
        })
    }

    fn at_end(&self) -> bool {
        self.next == self.tokens.len()
    }

    fn emit(&mut self, event: Event) {
        self.events.push((event, self.last_end));
    }

    /// The next token as a number, its start offset, recording its role.
    fn number_as(&mut self, role: Role) -> Step<(u64, usize)> {
        let Some(&(start, end)) = self.tokens.get(self.next) else {
            return self.fail(self.input.len(), "end of input");
        };
        self.next += 1;
        let mut value: u64 = 0;
        for (i, &byte) in self.input[start..end].iter().enumerate() {
            if !byte.is_ascii_digit() {
                let keyword = if i == 0 { "found" } else { "inside a number" };
                return self.fail(start + i, keyword);
            }
            let digit = u64::from(byte - b'0');
            match value.checked_mul(10).and_then(|v| v.checked_add(digit)) {
                Some(v) => value = v,
                None => return self.fail(start, "does not fit in 64 bits"),
            }
        }
        self.read.push(ReadToken { start, end, role });
        self.last_end = end;
        Ok((value, start))
    }

    fn number(&mut self) -> Step<(u64, usize)> {
        self.number_as(Role::Number)
    }

    fn bounded(&mut self, max: u64) -> Step<(u64, usize)> {
        let (value, start) = self.number()?;
        if value > max {
            return self.fail(start, "above the maximum");
        }
        Ok((value, start))
    }

    fn vertex(&mut self, vertex_count: u64) -> Step<u32> {
        let (value, start) = self.number_as(Role::Vertex { vertex_count })?;
        if value >= vertex_count {
            return self.fail(start, "out of range");
        }
        Ok(value as u32)
    }

    fn vertex_count(&mut self) -> Step<(u64, usize)> {
        let (count, start) = self.number()?;
        if count == 0 || count > U32_MAX {
            return self.fail(start, "expected 1..=4294967295");
        }
        Ok((count, start))
    }

    fn chess(&mut self) -> Step<()> {
        while !self.at_end() {
            let (n, start) = self.vertex_count()?;
            let mut out_degrees = Vec::new();
            let mut targets = Vec::new();
            for _ in 0..n {
                let (degree, at) = self.bounded(U32_MAX)?;
                if targets.len() as u64 + degree > U32_MAX {
                    return self.fail(at, "more than");
                }
                out_degrees.push(degree as u32);
                for _ in 0..degree {
                    targets.push(self.vertex(n)?);
                }
            }
            let place = self.place(start);
            self.emit(Event::Graph {
                place,
                out_degrees,
                targets,
            });
            loop {
                let (m, _) = self.number()?;
                if m == 0 {
                    self.emit(Event::End);
                    break;
                }
                let mut tokens = Vec::new();
                for _ in 0..m {
                    tokens.push(self.vertex(n)?);
                }
                self.emit(Event::Query(tokens));
            }
        }
        Ok(())
    }

    fn addsub(&mut self) -> Step<()> {
        let (games, _) = self.number()?;
        for _ in 0..games {
            let (v, start) = self.vertex_count()?;
            let (e, _) = self.bounded(U32_MAX)?;
            let mut edges = Vec::new();
            for _ in 0..e {
                edges.push((self.vertex(v)?, self.vertex(v)?));
            }
            let mut split_counts = Vec::new();
            for _ in 0..v {
                split_counts.push(self.bounded(U32_MAX)?.0 as u32);
            }
            let (rounds, _) = self.number()?;
            let place = self.place(start);
            self.emit(Event::Game {
                place,
                vertex_count: v as u32,
                edges,
                split_counts,
                rounds,
            });
            for _ in 0..rounds {
                let mut odd_vertices = Vec::new();
                for vertex in 0..v as u32 {
                    if self.number()?.0 % 2 == 1 {
                        odd_vertices.push(vertex);
                    }
                }
                self.emit(Event::Round(odd_vertices));
            }
            self.emit(Event::End);
        }
        if !self.at_end() {
            let (_, start) = self.number()?;
            return self.fail(start, "after the last game");
        }
        Ok(())
    }
}
