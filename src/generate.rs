//! Seeded generators of graphs and judge files, for benchmarks and tests.
//!
//! Everything is deterministic for a given seed (SplitMix64, no external RNG crate) and
//! judge files stream straight to a writer, so inputs of any size need no memory beyond the
//! current test case's graph.

use std::io::{self, Write};

use crate::engine::Digraph;

/// SplitMix64: tiny, fast, and good enough for test data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose whole sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound > 0`), by multiply-shift (bias below 2^-32 for our sizes).
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// Uniform in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high - low + 1)
    }
}

/// Shapes of generated graphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shape {
    /// Random DAG: edges go from earlier to later vertices of a random topological order,
    /// half of them to near successors (deep graphs), half uniformly.
    Dag,
    /// A path 0 -> 1 -> ... -> n-1: the deepest graph.
    Chain,
    /// Vertex 0 points at every other vertex, and each of those at a few later ones.
    Fan,
    /// Uniformly random edges, self-loops and cycles included.
    Cyclic,
    /// A wide random DAG: layers of 4,096 vertices (randomly labelled), every edge from a
    /// layer to the next one or, one time in four, to one of the three after it. Every vertex
    /// of a layer after the first is the target of one edge from the layer before, so the
    /// layers are the Kahn rounds, each of 4,096 vertices (`WIDE_LAYER`).
    Wide,
}

/// The layer width of [`Shape::Wide`] (the last layer may be narrower).
pub const WIDE_LAYER: u32 = 4096;

/// Adjacency lists of a generated graph with about `edges` edges.
fn adjacency(shape: Shape, vertices: u32, edges: u64, rng: &mut Rng) -> Vec<Vec<u32>> {
    let n = vertices as usize;
    let mut adjacency = vec![Vec::new(); n];
    if n == 0 {
        return adjacency;
    }
    match shape {
        Shape::Chain => {
            for (v, successors) in adjacency.iter_mut().enumerate().take(n - 1) {
                successors.push(v as u32 + 1);
            }
        }
        Shape::Fan => {
            adjacency[0] = (1..vertices).collect();
            // With one vertex there is no other vertex to draw from.
            let rest = match vertices {
                1 => 0,
                _ => edges.saturating_sub(u64::from(vertices) - 1),
            };
            for _ in 0..rest {
                let from = rng.between(1, u64::from(vertices) - 1);
                if from + 1 < u64::from(vertices) {
                    let to = rng.between(from + 1, u64::from(vertices) - 1);
                    adjacency[from as usize].push(to as u32);
                }
            }
        }
        Shape::Cyclic => {
            for _ in 0..edges {
                let from = rng.below(u64::from(vertices)) as usize;
                adjacency[from].push(rng.below(u64::from(vertices)) as u32);
            }
        }
        Shape::Wide => {
            let mut label: Vec<u32> = (0..vertices).collect();
            for i in (1..n).rev() {
                label.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let width = WIDE_LAYER as usize;
            let layer_start = |position: usize| position - position % width;
            // One edge into every vertex past the first layer, from the layer before.
            let mut drawn = 0;
            for to in width..n {
                let previous = layer_start(to) - width;
                let from = previous + rng.below(width as u64) as usize;
                adjacency[label[from] as usize].push(label[to]);
                drawn += 1;
            }
            for _ in drawn..edges {
                let from = rng.below(u64::from(vertices)) as usize;
                let next = layer_start(from) + width;
                if next >= n {
                    continue;
                }
                let layers = if rng.below(4) == 0 { 4 } else { 1 };
                let end = (next + layers * width).min(n);
                let to = next + rng.below((end - next) as u64) as usize;
                adjacency[label[from] as usize].push(label[to]);
            }
        }
        Shape::Dag => {
            // label[i] is the vertex at topological position i.
            let mut label: Vec<u32> = (0..vertices).collect();
            for i in (1..n).rev() {
                label.swap(i, rng.below(i as u64 + 1) as usize);
            }
            for _ in 0..edges {
                let from = rng.below(u64::from(vertices)) as usize;
                if from + 1 >= n {
                    continue;
                }
                let span = (n - from - 1) as u64;
                let to = if rng.next_u64() & 1 == 0 {
                    from + 1 + rng.below(span.min(16)) as usize
                } else {
                    from + 1 + rng.below(span) as usize
                };
                adjacency[label[from] as usize].push(label[to]);
            }
        }
    }
    adjacency
}

/// A generated graph in CSR form. Its targets are advised for huge pages, as those of the
/// service's and the store's graphs are, so that benchmarks read them as the analyses do.
pub fn graph(shape: Shape, vertices: u32, edges: u64, seed: u64) -> Digraph {
    let adjacency = adjacency(shape, vertices, edges, &mut Rng::new(seed));
    let out_degrees: Vec<u32> = adjacency.iter().map(|a| a.len() as u32).collect();
    let total = out_degrees.iter().map(|&d| d as usize).sum();
    let mut targets: Vec<u32> = crate::engine::huge_pages::with_capacity(total);
    targets.extend(adjacency.into_iter().flatten());
    Digraph::from_out_degrees(vertices, &out_degrees, targets).expect("generated graphs are valid")
}

/// Parameters of a generated POJ 2425 judge file.
#[derive(Debug, Clone, clap::Args)]
pub struct ChessSpec {
    /// Number of test cases.
    #[arg(long, default_value_t = 1)]
    pub cases: u32,
    /// Vertices per test case (at least 1).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub n: u32,
    /// Edges per test case (default: 5 per vertex), as the shape allows: a chain always has
    /// n - 1 and a fan at least n - 1 (vertex 0 to every other); dag and fan drop the extra
    /// edges drawn from a vertex with no later vertex; cyclic keeps them all.
    #[arg(long)]
    pub edges: Option<u64>,
    /// Graph shape.
    #[arg(long, value_enum, default_value = "dag")]
    pub shape: Shape,
    /// Queries per test case.
    #[arg(long, default_value_t = 1000)]
    pub queries: u64,
    /// Most tokens per query (each query has 1..=max).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: u32,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Writes a POJ 2425 judge file.
pub fn write_chess(spec: &ChessSpec, out: &mut impl Write) -> io::Result<()> {
    let mut rng = Rng::new(spec.seed);
    let edges = spec.edges.unwrap_or(5 * u64::from(spec.n));
    let mut line = Vec::with_capacity(1 << 16);
    for _ in 0..spec.cases {
        let adjacency = adjacency(spec.shape, spec.n, edges, &mut rng);
        writeln!(out, "{}", spec.n)?;
        for successors in &adjacency {
            line.clear();
            write_numbers(
                &mut line,
                successors.len() as u64,
                successors.iter().map(|&v| u64::from(v)),
            );
            out.write_all(&line)?;
        }
        for _ in 0..spec.queries {
            let tokens = rng.between(1, u64::from(spec.max_tokens.max(1)));
            line.clear();
            let n = u64::from(spec.n);
            write_numbers(&mut line, tokens, (0..tokens).map(|_| rng.below(n)));
            out.write_all(&line)?;
        }
        out.write_all(b"0\n")?;
    }
    Ok(())
}

/// Parameters of a generated LA 4411 judge file.
#[derive(Debug, Clone, clap::Args)]
pub struct AddsubSpec {
    /// Number of games.
    #[arg(long, default_value_t = 1)]
    pub cases: u32,
    /// Vertices per game (at least 1).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub n: u32,
    /// Edges per game (default: 3 per vertex), on a random DAG: edges drawn from the last
    /// vertex of its order have nowhere to go and are dropped, so a few may be missing.
    #[arg(long)]
    pub edges: Option<u64>,
    /// Largest split count K (each vertex gets 0..=kmax).
    #[arg(long, default_value_t = 15)]
    pub kmax: u32,
    /// Largest vertex value in a round.
    #[arg(long, default_value_t = 1000)]
    pub vmax: u64,
    /// Rounds per game.
    #[arg(long, default_value_t = 1000)]
    pub rounds: u64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Writes an LA 4411 judge file (always acyclic: the game requires it).
pub fn write_addsub(spec: &AddsubSpec, out: &mut impl Write) -> io::Result<()> {
    let mut rng = Rng::new(spec.seed);
    let edges = spec.edges.unwrap_or(3 * u64::from(spec.n));
    writeln!(out, "{}", spec.cases)?;
    let mut line = Vec::with_capacity(1 << 16);
    for _ in 0..spec.cases {
        let adjacency = adjacency(Shape::Dag, spec.n, edges, &mut rng);
        let edge_count: usize = adjacency.iter().map(Vec::len).sum();
        writeln!(out, "{} {edge_count}", spec.n)?;
        for (from, successors) in adjacency.iter().enumerate() {
            for &to in successors {
                writeln!(out, "{from} {to}")?;
            }
        }
        line.clear();
        let kmax = u64::from(spec.kmax);
        write_row(&mut line, (0..spec.n).map(|_| rng.between(0, kmax)));
        out.write_all(&line)?;
        writeln!(out, "{}", spec.rounds)?;
        for _ in 0..spec.rounds {
            line.clear();
            write_row(&mut line, (0..spec.n).map(|_| rng.between(0, spec.vmax)));
            out.write_all(&line)?;
        }
    }
    Ok(())
}

/// `count v1 v2 ...\n`
fn write_numbers(line: &mut Vec<u8>, count: u64, values: impl Iterator<Item = u64>) {
    let mut buffer = itoa::Buffer::new();
    line.extend_from_slice(buffer.format(count).as_bytes());
    for value in values {
        line.push(b' ');
        line.extend_from_slice(buffer.format(value).as_bytes());
    }
    line.push(b'\n');
}

/// `v1 v2 ...\n`
fn write_row(line: &mut Vec<u8>, values: impl Iterator<Item = u64>) {
    let mut buffer = itoa::Buffer::new();
    for (i, value) in values.enumerate() {
        if i > 0 {
            line.push(b' ');
        }
        line.extend_from_slice(buffer.format(value).as_bytes());
    }
    line.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::order::find_cycle;
    use crate::judge::chess::{ChessEvent, ChessReader};

    #[test]
    fn shapes_have_their_properties() {
        let dag = graph(Shape::Dag, 2000, 10_000, 3);
        assert!(find_cycle(&dag).is_none());
        assert!(dag.edge_count() > 9000);
        let chain = graph(Shape::Chain, 100, 0, 1);
        assert_eq!(chain.edge_count(), 99);
        let fan = graph(Shape::Fan, 100, 500, 1);
        assert_eq!(fan.out_degree(0), 99);
        assert!(find_cycle(&fan).is_none());
        assert!(find_cycle(&graph(Shape::Cyclic, 100, 1000, 1)).is_some());
        let wide = graph(Shape::Wide, 3 * WIDE_LAYER, 30_000, 2);
        assert!(find_cycle(&wide).is_none());
        assert!(wide.edge_count() > 15_000);
        for shape in [
            Shape::Dag,
            Shape::Chain,
            Shape::Fan,
            Shape::Cyclic,
            Shape::Wide,
        ] {
            assert_eq!(graph(shape, 1, 10, 1).vertex_count(), 1, "{shape:?}");
        }
        assert_eq!(
            graph(Shape::Dag, 500, 2000, 9),
            graph(Shape::Dag, 500, 2000, 9)
        );
    }

    #[test]
    fn generated_chess_file_parses() {
        let spec = ChessSpec {
            cases: 3,
            n: 50,
            edges: None,
            shape: Shape::Cyclic,
            queries: 20,
            max_tokens: 4,
            seed: 5,
        };
        let mut text = Vec::new();
        write_chess(&spec, &mut text).unwrap();
        let mut reader = ChessReader::new(text.as_slice());
        let (mut cases, mut queries) = (0, 0);
        while let Some(event) = reader.next_event().unwrap() {
            match event {
                ChessEvent::Graph { .. } => cases += 1,
                ChessEvent::Query(tokens) => {
                    assert!((1..=4).contains(&tokens.len()));
                    queries += 1;
                }
                ChessEvent::EndOfCase => {}
            }
        }
        assert_eq!((cases, queries), (3, 60));
    }
}
