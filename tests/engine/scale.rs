//! Engine tier at scale: deep and large graphs through the public API, checked by a linear
//! pass that re-derives the mex rule (no timing assertions: benchmarks measure speed), and the
//! memory `analyse` and the position analysis take, measured by a counting allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use grundy::engine::{
    Analysis, AnalysisOptions, DEFAULT_POSITION_BUDGET, Game, Interrupt, Limits, Outcome,
    Remoteness, VertexValue, analyse,
};
use grundy::generate::{Shape, graph};

/// The system allocator, counting the live and peak bytes of the threads that ask for it (tests
/// run in parallel threads, so counts are per thread).
struct CountingAllocator;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(bytes: isize) {
    // `const` thread-locals of `Cell<Copy>` need no allocation or destructor: safe in here.
    if COUNTING.with(Cell::get) {
        let live = LIVE.with(|live| {
            live.set(live.get() + bytes);
            live.get()
        });
        PEAK.with(|peak| peak.set(peak.get().max(live)));
    }
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Runs `work` on this thread and returns its result with the peak of the bytes it held
/// (allocated and not yet freed) at any time.
fn peak_bytes_of<T>(work: impl FnOnce() -> T) -> (T, usize) {
    LIVE.with(|live| live.set(0));
    PEAK.with(|peak| peak.set(0));
    COUNTING.with(|counting| counting.set(true));
    let result = work();
    COUNTING.with(|counting| counting.set(false));
    (result, PEAK.with(Cell::get).max(0) as usize)
}

/// Analyses `game` and checks that the graph plus the most memory `analyse` held stays under
/// twice the graph plus the table it returns: scratch space is at most the size of the inputs
/// and outputs.
fn analyse_in_linear_memory(game: Game) -> Analysis {
    let csr_bytes = game.graph().heap_bytes();
    let (analysis, peak) = peak_bytes_of(|| analyse(game, &Limits::default()).unwrap());
    // The misère remoteness table is counted in `heap_bytes` but only computed on first need
    // (4 bytes a vertex): `analyse` never holds it.
    let misere_bytes = 4 * analysis.game().graph().vertex_count() as usize;
    let table_bytes = analysis.heap_bytes() - csr_bytes - misere_bytes;
    eprintln!("CSR {csr_bytes} B, table {table_bytes} B, peak during analyse {peak} B");
    assert!(table_bytes > 0 && peak >= table_bytes);
    assert!(
        csr_bytes + peak <= 2 * (csr_bytes + table_bytes),
        "peak {peak} B over CSR {csr_bytes} B + 2 x table {table_bytes} B"
    );
    analysis
}

/// Checks `g(v) = mex { g(w) }` at every vertex of an acyclic analysis.
fn assert_mex_rule(analysis: &Analysis) {
    let digraph = analysis.game().graph();
    let values = analysis.values();
    let mut successor_values = Vec::new();
    for v in 0..digraph.vertex_count() {
        successor_values.clear();
        successor_values.extend(digraph.successors(v).iter().map(|&w| values[w as usize]));
        successor_values.sort_unstable();
        successor_values.dedup();
        let mex = successor_values
            .iter()
            .enumerate()
            .find(|&(i, &value)| value != i as u64)
            .map_or(successor_values.len() as u64, |(i, _)| i as u64);
        assert_eq!(values[v as usize], mex, "vertex {v}");
    }
}

#[test]
fn million_vertex_chain_needs_no_recursion() {
    let n = 1_000_000;
    let analysis = analyse(
        Game::token_sliding(graph(Shape::Chain, n, 0, 1)),
        &Limits::default(),
    )
    .unwrap();
    // Vertex v is n - 1 - v moves from the end: odd distance wins.
    assert_eq!(analysis.values()[0], u64::from((n - 1) % 2));
    assert_eq!(
        analysis.evaluate(&[(0, 1), (1, 1)]).unwrap().outcome,
        Outcome::Win
    );
    assert_mex_rule(&analysis);
}

#[test]
fn million_vertex_ten_million_edge_dag() {
    let dag = graph(Shape::Dag, 1_000_000, 10_000_000, 11);
    // The generator drops the few edges drawn from the last vertex of its order.
    assert!(dag.edge_count() > 9_900_000);
    let analysis = analyse_in_linear_memory(Game::token_sliding(dag));
    assert!(!analysis.is_cyclic());
    assert_mex_rule(&analysis);
}

#[test]
fn large_cyclic_graph_gets_finite_and_infinite_values() {
    let digraph = graph(Shape::Cyclic, 100_000, 1_000_000, 5);
    let analysis = analyse_in_linear_memory(Game::token_sliding(digraph));
    assert!(analysis.is_cyclic());
    let (mut finite, mut infinite) = (0, 0);
    for v in 0..100_000 {
        match analysis.vertex_value(v).unwrap() {
            VertexValue::Finite(_) => finite += 1,
            VertexValue::Infinite { .. } => infinite += 1,
        }
    }
    assert!(
        finite > 0 && infinite > 0,
        "finite {finite}, infinite {infinite}"
    );
    for v in 0..100_000 {
        let outcome = analysis.evaluate(&[(v, 2)]).unwrap().outcome;
        match analysis.vertex_value(v).unwrap() {
            // Two tokens on one finite vertex cancel; on an infinite vertex they draw.
            VertexValue::Finite(_) => assert_eq!(outcome, Outcome::Lose, "vertex {v}"),
            VertexValue::Infinite { .. } => assert_eq!(outcome, Outcome::Draw, "vertex {v}"),
        }
    }
}

/// Tokens of the wide positions below: 12,000, each on its own vertex of out-degree 8.
const WIDE: u32 = 12_000;

/// A DAG where vertex `v` points at `v + 1 ..= v + 8` (those that exist), and a position of
/// one token on each of its first [`WIDE`] vertices: 96,000 distinct moves, each to a
/// position of 12,000 tokens (48 KB).
fn wide_position() -> (Analysis, Vec<u32>) {
    let n = WIDE + 8;
    let mut edges = Vec::new();
    let mut out_degrees = Vec::new();
    for v in 0..n {
        let before = edges.len();
        edges.extend((v + 1..=v + 8).filter(|&w| w < n));
        out_degrees.push((edges.len() - before) as u32);
    }
    let graph = grundy::engine::Digraph::from_out_degrees(n, &out_degrees, edges).unwrap();
    let analysis = analyse(Game::token_sliding(graph), &Limits::default()).unwrap();
    (analysis, (0..WIDE).collect())
}

/// The moves of a wide position are listed and counted without building the positions they
/// lead to, so memory stays linear in the tokens: at a position budget of 1 and one move
/// listed, a few hundred kilobytes (building every move's position took 4.6 GB).
#[test]
fn budget_a_wide_position_is_analysed_in_memory_linear_in_its_tokens() {
    let (analysis, tokens) = wide_position();
    let options = AnalysisOptions {
        position_budget: 1,
        max_moves: 1,
        ..AnalysisOptions::default()
    };
    let (found, peak) = peak_bytes_of(|| analysis.analyse_position(&tokens, &options).unwrap());
    eprintln!("peak during the analysis of {WIDE} tokens: {peak} B");
    assert!(matches!(found.remoteness, Remoteness::OverBudget { .. }));
    assert_eq!(found.moves.len(), 1);
    assert_eq!(
        found.moves.len() as u64 + found.moves_omitted,
        8 * u64::from(WIDE)
    );
    assert!(peak < 8 << 20, "peak {peak} B");
}

/// At the default budgets, the work budget bounds the search of a wide position whatever
/// the position budget would allow: the search stops long before its million positions, in
/// memory bounded by the budget, and every move is still listed with its outcome.
#[test]
fn budget_the_work_budget_bounds_a_wide_search() {
    let (analysis, tokens) = wide_position();
    let options = AnalysisOptions::default();
    let (found, peak) = peak_bytes_of(|| analysis.analyse_position(&tokens, &options).unwrap());
    eprintln!("peak during the analysis of {WIDE} tokens at the default budgets: {peak} B");
    let Remoteness::OverBudget {
        positions_explored, ..
    } = found.remoteness
    else {
        panic!("{:?}", found.remoteness);
    };
    assert!(positions_explored < DEFAULT_POSITION_BUDGET);
    assert_eq!(found.moves.len() as u64, 8 * u64::from(WIDE));
    let expected = analysis.evaluate_tokens(&tokens).unwrap().outcome;
    assert_eq!(found.outcome, expected);
    assert!(peak < 256 << 20, "peak {peak} B");
}

/// An interrupt stops the analysis of a wide position in its listing too (not only every
/// few thousand positions searched): with the flag raised before it starts, it returns
/// having built almost nothing.
#[test]
fn an_interrupt_stops_the_listing_of_a_wide_position() {
    let (analysis, tokens) = wide_position();
    let options = AnalysisOptions {
        position_budget: u64::MAX,
        work_budget: u64::MAX,
        max_moves: u32::MAX,
    };
    let interrupt = Interrupt::new();
    interrupt.interrupt();
    let (found, peak) = peak_bytes_of(|| {
        analysis.analyse_position_interruptible(&tokens, &options, &interrupt, &mut || {})
    });
    assert!(found.is_err(), "cancelled");
    assert!(peak < 8 << 20, "peak {peak} B");
}

/// A sum of two tokens on a large random DAG, whose full search visits millions of positions
/// (26 s of CPU at the default position budget when only positions were counted): the work
/// budget stops it first, and what it reports is exact or over the budget.
#[test]
fn budget_the_work_budget_stops_a_sum_on_a_large_graph_first() {
    let dag = graph(Shape::Dag, 100_000, 1_000_000, 7);
    let analysis = analyse(Game::token_sliding(dag), &Limits::default()).unwrap();
    let found = analysis
        .analyse_position(&[0, 1], &AnalysisOptions::default())
        .unwrap();
    let Remoteness::OverBudget {
        positions_explored, ..
    } = found.remoteness
    else {
        panic!("{:?}", found.remoteness);
    };
    assert!(positions_explored < DEFAULT_POSITION_BUDGET / 4);
    assert_eq!(
        found.outcome,
        analysis.evaluate_tokens(&[0, 1]).unwrap().outcome
    );
}
