//! Judge parser benchmark (criterion): the chess reader on a judge file held in memory, beside
//! its peer, the digit loop a hand-written C++ program would use (`benches/peer/chess.cpp`
//! reads its queries that way: one byte at a time, no locations, no checks beyond digits).
//!
//! Two files: the README's chess input (small graphs, many queries), and one large graph
//! (its adjacency lists read through the larger buffer of a large graph).
//!
//! `cargo bench --bench judge`; `GRUNDY_BENCH_SCALE=small` shrinks the files for a quick run.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use grundy::generate::{ChessSpec, Shape, write_chess};
use grundy::judge::ListBudget;
use grundy::judge::chess::{ChessEvent, ChessReader};

/// The shape of the README's chess input (`scripts/bench.sh`): 1,000 vertices of out-degree
/// 20, 100,000 queries of 1 to 10 tokens per case.
fn chess_file() -> Vec<u8> {
    let cases = match std::env::var("GRUNDY_BENCH_SCALE").as_deref() {
        Ok("small") => 1,
        _ => 4,
    };
    let spec = ChessSpec {
        cases,
        n: 1000,
        edges: Some(20_000),
        shape: Shape::Dag,
        queries: 100_000,
        max_tokens: 10,
        seed: 7,
    };
    let mut file = Vec::new();
    write_chess(&spec, &mut file).expect("writing to memory");
    file
}

/// One test case of a large random DAG (10^6 vertices, 10^7 edges; a tenth of that at the
/// small scale) and one query: nearly all of it adjacency lists.
fn large_graph_file() -> Vec<u8> {
    let n = match std::env::var("GRUNDY_BENCH_SCALE").as_deref() {
        Ok("small") => 100_000,
        _ => 1_000_000,
    };
    let spec = ChessSpec {
        cases: 1,
        n,
        edges: Some(10 * u64::from(n)),
        shape: Shape::Dag,
        queries: 1,
        max_tokens: 1,
        seed: 7,
    };
    let mut file = Vec::new();
    write_chess(&spec, &mut file).expect("writing to memory");
    file
}

/// What the CLI does with the reader: the buffered queries in bulk, everything else (graphs,
/// the end of a case, a query across a buffer boundary) as events. Returns the tokens read.
fn read_like_the_cli(file: &[u8]) -> usize {
    let mut reader = ChessReader::new(file);
    let budget = ListBudget {
        lists: 4096,
        bytes: u64::MAX,
        list_bytes: 8,
        item_bytes: 5,
        min_list: 1,
        max_list: 1 << 20,
    };
    let (mut counts, mut vertices) = (Vec::new(), Vec::new());
    let mut tokens = 0;
    loop {
        counts.clear();
        vertices.clear();
        if reader.read_buffered_queries(budget, &mut counts, &mut vertices) > 0 {
            tokens += vertices.len();
            continue;
        }
        match reader.next_event().expect("a valid file") {
            None => return tokens,
            Some(ChessEvent::Query(query)) => tokens += query.len(),
            Some(ChessEvent::Graph { targets, .. }) => tokens += targets.len(),
            Some(ChessEvent::EndOfCase) => {}
        }
    }
}

/// The peer's parser: every number by a loop over its digits, into one array.
fn digit_loop(file: &[u8], numbers: &mut Vec<u32>) -> usize {
    numbers.clear();
    let mut bytes = file.iter();
    while let Some(&byte) = bytes.next() {
        if byte.is_ascii_digit() {
            let mut value = u32::from(byte - b'0');
            for &next in bytes.by_ref() {
                if !next.is_ascii_digit() {
                    break;
                }
                value = value.wrapping_mul(10).wrapping_add(u32::from(next - b'0'));
            }
            numbers.push(value);
        }
    }
    numbers.len()
}

fn chess_parse(c: &mut Criterion) {
    let file = chess_file();
    let mut group = c.benchmark_group("chess_parse");
    group.throughput(Throughput::Bytes(file.len() as u64));
    group.sample_size(20);
    let mut numbers = Vec::new();
    group.bench_function("peer_digit_loop", |b| {
        b.iter(|| digit_loop(black_box(&file), &mut numbers))
    });
    group.bench_function("reader", |b| b.iter(|| read_like_the_cli(black_box(&file))));
    group.finish();
}

fn chess_graph_parse(c: &mut Criterion) {
    let file = large_graph_file();
    let mut group = c.benchmark_group("chess_graph_parse");
    group.throughput(Throughput::Bytes(file.len() as u64));
    group.sample_size(10);
    let mut numbers = Vec::new();
    group.bench_function("peer_digit_loop", |b| {
        b.iter(|| digit_loop(black_box(&file), &mut numbers))
    });
    group.bench_function("reader", |b| b.iter(|| read_like_the_cli(black_box(&file))));
    group.finish();
}

criterion_group!(benches, chess_parse, chess_graph_parse);
criterion_main!(benches);
