//! The chess reader: events, bulk reads and errors against the judge format.

use super::*;

fn events(input: &str) -> Result<Vec<String>, String> {
    super::super::debug_events!(ChessReader::new(input.as_bytes()))
}

#[test]
fn reads_cases_and_queries() {
    let out = events("2\n1 1\n0\n1 0\n2 0 1\n0\n\n1 0 1 0 0\n").unwrap();
    assert_eq!(out.len(), 7);
    assert!(out[0].contains("vertex_count: 2"));
    assert_eq!(out[1], "Query([0])");
    assert_eq!(out[2], "Query([0, 1])");
    assert_eq!(out[3], "EndOfCase");
    assert!(out[4].contains("case: 2"));
    assert_eq!(out[5], "Query([0])");
    assert_eq!(out[6], "EndOfCase");
}

/// Every query and the first error, as text, read event by event or (`bulk`) with
/// [`ChessReader::read_buffered_queries`] first whenever it can, through a scanner buffer
/// of `buffer` bytes; with how many queries were read in bulk.
fn transcript(input: &[u8], buffer: usize, bulk: Option<ListBudget>) -> (Vec<String>, usize) {
    let scanner = Scanner::with_buffer_bytes(input, buffer);
    reader_transcript(ChessReader::with_scanner(scanner), bulk)
}

/// [`transcript`] of one reader.
fn reader_transcript<R: Read>(
    mut reader: ChessReader<R>,
    bulk: Option<ListBudget>,
) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let (mut counts, mut vertices) = (Vec::new(), Vec::new());
    let mut in_bulk = 0;
    loop {
        if let Some(budget) = bulk {
            counts.clear();
            vertices.clear();
            let read = reader.read_buffered_queries(budget, &mut counts, &mut vertices);
            assert_eq!(read, counts.len());
            let mut rest = &vertices[..];
            for &count in &counts {
                let (query, after) = rest.split_at(count as usize);
                out.push(format!("Query({query:?})"));
                rest = after;
            }
            assert!(rest.is_empty());
            in_bulk += read;
            if read > 0 {
                continue;
            }
        }
        match reader.next_event() {
            Ok(None) => return (out, in_bulk),
            Ok(Some(event)) => out.push(format!("{event:?}")),
            Err(error) => {
                out.push(error.to_string());
                return (out, in_bulk);
            }
        }
    }
}

/// Reads `text` through a scanner buffer of each of `buffers` bytes, in bulk within a
/// budget from `budget`, and asserts that every transcript is the event path's (read
/// through the first buffer size); returns how many queries were read in bulk.
fn assert_bulk_agrees<const N: usize>(
    text: &str,
    buffers: [usize; N],
    mut budget: impl FnMut() -> ListBudget,
) -> usize {
    let (expected, _) = transcript(text.as_bytes(), buffers[0], None);
    let mut in_bulk = 0;
    for buffer in buffers {
        let budget = budget();
        let (got, bulk) = transcript(text.as_bytes(), buffer, Some(budget));
        assert_eq!(got, expected, "input {text:?}, buffer {buffer}, {budget:?}");
        in_bulk += bulk;
    }
    in_bulk
}

/// A seeded generator: each call gives a value below its bound.
fn seeded(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut rng = crate::generate::Rng::new(seed);
    move |bound| rng.below(bound)
}

#[test]
fn buffered_queries_read_as_events_do() {
    let mut next = seeded(0x2545_f491_4f6c_dd1d);
    let mut in_bulk = 0;
    for _ in 0..3000 {
        let n = 1 + next(20);
        let mut text = format!("{n}\n");
        for _ in 0..n {
            let degree = next(3);
            text += &degree.to_string();
            for _ in 0..degree {
                text += &format!(" {}", next(n));
            }
            text += "\n";
        }
        let separators = [
            " ", " ", " ", " ", " ", " ", " ", " ", "  ", "\n", "\t", "\r\n",
        ];
        for _ in 0..next(30) {
            // Now and then a 0, which ends the test case (what follows is the next one).
            let tokens = if next(40) == 0 { 0 } else { 1 + next(5) };
            text += &tokens.to_string();
            for _ in 0..tokens {
                text += separators[next(separators.len() as u64) as usize];
                // Now and then a vertex out of range, a long number or a bad byte.
                text += &match next(60) {
                    0 => n.to_string(),
                    1 => "123456789012".into(),
                    2 => "x".into(),
                    _ => next(n).to_string(),
                };
            }
            text += if next(4) == 0 { " \n" } else { "\n" };
        }
        if next(5) > 0 {
            text += "0\n";
        }
        let buffers = [1 << 16, 1 + next(40) as usize];
        in_bulk += assert_bulk_agrees(&text, buffers, || ListBudget {
            lists: 1 + next(8) as usize,
            bytes: 20 + next(200),
            list_bytes: 5 + next(20),
            item_bytes: 5,
            min_list: 1,
            max_list: 1 + next(6),
        });
    }
    // The fast path did its share (most queries are well-formed and fit the budgets).
    assert!(in_bulk > 3_000, "only {in_bulk} queries read in bulk");
}

/// Long files, so that the bulk reader's 64-byte windows are crossed by numbers, by runs
/// of whitespace and by lines, with the rarer shapes mixed in: leading zeros, numbers of
/// 9 to 25 digits, bad bytes, a `0`, counts over the budget.
#[test]
fn bulk_reads_across_windows_read_as_events_do() {
    let mut next = seeded(0x9e37_79b9_7f4a_7c15);
    let mut in_bulk = 0;
    for _ in 0..300 {
        let n = 1 + next(2000);
        let mut text = format!("{n}\n");
        for _ in 0..n.min(5) {
            text += "0\n";
        }
        for _ in n.min(5)..n {
            text += "0 ";
        }
        let separator = |next: &mut dyn FnMut(u64) -> u64| match next(30) {
            0 => " ".repeat(1 + next(90) as usize),
            1 => "\n".into(),
            2 => "\r\n".into(),
            3 => " \t\x0b\x0c ".into(),
            4 => "\n\n   \n".into(),
            _ => " ".into(),
        };
        // Mostly plain; what ends the file with an error (a bad byte, a vertex out of
        // range) is rare enough that most files are read far.
        let number = |next: &mut dyn FnMut(u64) -> u64, value: u64| match next(2000) {
            0..50 => format!("{}{value}", "0".repeat(1 + next(20) as usize)),
            50 => format!("{value}{}", "7".repeat(8 + next(18) as usize)),
            51 => ["x", "\u{ff}", "-", "+1"][next(4) as usize].into(),
            _ => value.to_string(),
        };
        for _ in 0..next(400) {
            let tokens = match next(400) {
                0 => 0,
                1..8 => 20 + next(100),
                _ => 1 + next(10),
            };
            text += &number(&mut next, tokens);
            for _ in 0..tokens {
                text += &separator(&mut next);
                let vertex = if next(3000) == 0 { n } else { next(n) };
                text += &number(&mut next, vertex);
            }
            text += if next(8) == 0 { "  \n" } else { "\n" };
        }
        let buffers = [1 << 20, 64 + next(300) as usize, 1 + next(100) as usize];
        in_bulk += assert_bulk_agrees(&text, buffers, || ListBudget {
            lists: 1 + next(500) as usize,
            bytes: 100 + next(20_000),
            list_bytes: 5 + next(20),
            item_bytes: 5,
            min_list: 1,
            max_list: 1 + next(60),
        });
    }
    assert!(in_bulk > 10_000, "only {in_bulk} queries read in bulk");
}

/// Every event of `text` (the first error as its message), read through a buffer of
/// `buffer` bytes.
fn graph_transcript(text: &[u8], buffer: usize) -> Vec<String> {
    let mut reader = ChessReader::with_scanner(Scanner::with_buffer_bytes(text, buffer));
    let mut out = Vec::new();
    loop {
        match reader.next_event() {
            Ok(None) => break,
            Ok(Some(event)) => out.push(format!("{event:?}")),
            Err(error) => {
                out.push(error.to_string());
                break;
            }
        }
    }
    out
}

/// Graphs read in bulk through buffers of any size: the events (and the first error, with
/// its location) are the same, and a well-formed graph is the one written. The lists are
/// mostly one a line; now and then one spans lines or shares one.
#[test]
fn graphs_read_through_any_buffer_read_alike() {
    let mut next = seeded(0x6a09_e667_f3bc_c908);
    for round in 0..400 {
        let n = 1 + next(300);
        let flawed = round % 4 == 0;
        let mut text = format!("{n}\n");
        let (mut out_degrees, mut targets) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let degree = if next(6) == 0 { 0 } else { 1 + next(12) };
            out_degrees.push(degree as u32);
            text += &degree.to_string();
            for _ in 0..degree {
                text += match next(200) {
                    0 => "\n",
                    1 => "   ",
                    2 => "\t",
                    _ => " ",
                };
                let target = next(n);
                targets.push(target as u32);
                text += &match next(if flawed { 3000 } else { u64::MAX }) {
                    0 => n.to_string(),
                    1 => "x".into(),
                    2 => "12345678901234567890123".into(),
                    _ => target.to_string(),
                };
            }
            text += ["\n", "\n", "\n", "\n", "\n", " \n", "\r\n", " "][next(8) as usize];
        }
        text += "1 0\n2 0 0\n0\n";
        let expected = graph_transcript(text.as_bytes(), 1 << 20);
        if !flawed {
            let graph = ChessEvent::Graph {
                case: 1,
                location: Location { line: 1, column: 1 },
                vertex_count: n as u32,
                out_degrees: out_degrees.clone(),
                targets: targets.clone(),
            };
            assert_eq!(expected[0], format!("{graph:?}"));
            assert_eq!(expected.len(), 4, "{expected:?}");
        }
        let buffer = 100 + next(3000) as usize;
        let got = graph_transcript(text.as_bytes(), buffer);
        assert_eq!(got, expected, "input {text:?}, buffer {buffer}");
    }
}
