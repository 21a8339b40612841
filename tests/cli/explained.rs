//! `--explain` moves played out on the golden files, and `grundy analyse`'s JSON lines: every
//! move legal, every promise kept (a WIN's move leads to a LOSE position, ...), the analysis
//! best first.

use std::fs;
use std::process::Command;

use super::judge::*;
use crate::support::process::run;

/// Every `<stem>.explain.out` is the `--explain` output for `<stem>.in`, and its moves are
/// checked independently of the recording: each is legal, and grundy judges the position it
/// leads to as the verdict demands (LOSE after a WIN move, DRAW after a DRAW move).
#[test]
fn explained_moves_are_legal_and_keep_their_promise() {
    let entries = fs::read_dir(data_dir()).expect("cannot list tests/data");
    let mut stems: Vec<String> = entries
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            Some(name.strip_suffix(".explain.out")?.to_string())
        })
        .collect();
    stems.sort();
    assert!(stems.len() >= 3, "explain files: {stems:?}");
    for stem in &stems {
        let format = Format::from_stem(stem).expect("an explain file names its format");
        let input_path = data_dir().join(format!("{stem}.in"));
        let output = run(
            judge_command(format).arg(&input_path).arg("--explain"),
            None,
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{stem}: {}",
            lossy(&output.stderr)
        );
        if let Err(difference) = check_expected(
            &data_dir().join(format!("{stem}.explain.out")),
            &output.stdout,
            blessing(),
        ) {
            panic!("{stem}.explain.out: {difference}");
        }
        let input = String::from_utf8(read(&input_path)).expect("input is UTF-8");
        let verdicts = String::from_utf8(read(&data_dir().join(format!("{stem}.out")))).unwrap();
        let explained = String::from_utf8(output.stdout).expect("output is UTF-8");
        match format {
            Format::Chess => check_chess_moves(stem, &input, &verdicts, &explained),
            Format::Addsub => check_addsub_moves(stem, &input, &verdicts, &explained),
        }
    }
}

/// WIN lines move to a LOSE position, DRAW lines to a DRAW one, LOSE lines name no move.
fn check_chess_moves(stem: &str, input: &str, verdicts: &str, explained: &str) {
    let cases = ChessCase::parse_all(input);
    let mut explained = explained.lines();
    let mut verdicts = verdicts.lines();
    // The same graphs, queried at the positions the explained moves lead to.
    let mut after_moves = Vec::new();
    let mut expected_after = Vec::new();
    for case in &cases {
        let mut queries_after = Vec::new();
        for tokens in &case.queries {
            let line = explained.next().expect("a line per query");
            let verdict = verdicts.next().expect("a verdict per query");
            match parse_explained(line) {
                (word, Some((from, to))) if word == verdict && word != "LOSE" => {
                    let token = tokens.iter().position(|&t| t == from);
                    let token = token.unwrap_or_else(|| {
                        panic!("{stem}: {line:?}: no token on {from} in the query {tokens:?}")
                    });
                    assert!(
                        case.successors[from as usize].contains(&to),
                        "{stem}: {line:?}: no edge {from} -> {to}"
                    );
                    let mut moved = tokens.clone();
                    moved[token] = to;
                    queries_after.push(moved);
                    expected_after.push(if word == "WIN" { "LOSE" } else { "DRAW" });
                }
                ("LOSE", None) if verdict == "LOSE" => {}
                _ => panic!(
                    "{stem}: {line:?}: expected the verdict {verdict}, with a move unless LOSE"
                ),
            }
        }
        after_moves.push(ChessCase {
            successors: case.successors.clone(),
            queries: queries_after,
        });
    }
    assert_eq!(
        explained.next(),
        None,
        "{stem}: more output lines than queries"
    );

    let judge_text = ChessCase::to_judge_text(&after_moves);
    let output = run(
        &mut judge_command(Format::Chess),
        Some(judge_text.into_bytes()),
    );
    assert_eq!(output.status.code(), Some(0), "{}", lossy(&output.stderr));
    let verdicts_after: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        verdicts_after, expected_after,
        "{stem}: an explained move does not do what its verdict promises"
    );
}

/// WINNING lines name a legal split (a unit taken from a vertex holding one, K_v picks among
/// its out-neighbours, in increasing order) that leaves a LOSING round.
fn check_addsub_moves(stem: &str, input: &str, verdicts: &str, explained: &str) {
    let games = AddsubGame::parse_all(input);
    let mut explained = explained.lines();
    let mut verdicts = verdicts.lines();
    let mut after_moves = Vec::new();
    for game in &games {
        let mut rounds_after = Vec::new();
        for _header_or_round in 0..game.rounds.len() + 2 {
            let line = explained.next().expect("a line per judge line");
            let verdict = verdicts.next().expect("a judge line");
            let Some((verdict_line, picks)) = line.split_once(" move ") else {
                assert_eq!(line, verdict, "{stem}: only WINNING lines have a move");
                continue;
            };
            assert_eq!(verdict_line, verdict, "{stem}: {line:?}");
            assert!(verdict.ends_with(": WINNING"), "{stem}: {line:?}");
            let round: usize = verdict
                .strip_prefix("Round#")
                .and_then(|rest| rest.split(':').next())
                .and_then(|number| number.parse().ok())
                .unwrap_or_else(|| panic!("{stem}: {line:?}: no round number"));
            let (vertex, picks) = picks.split_once(" -> ").expect("`v -> picks`");
            let vertex: usize = vertex.parse().expect("a vertex");
            let mut values = game.rounds[round - 1].clone();
            assert!(values[vertex] >= 1, "{stem}: {line:?}: no unit on {vertex}");
            values[vertex] -= 1;
            let mut pick_count = 0u64;
            let mut previous = 0u32;
            for pick in picks.split(' ') {
                let (target, count) = match pick.split_once('*') {
                    Some((target, count)) => (target, count.parse::<u64>().expect("a count")),
                    None => (pick, 1),
                };
                let target: u32 = target.parse().expect("a vertex");
                assert!(target >= previous, "{stem}: {line:?}: picks out of order");
                assert!(
                    game.successors[vertex].contains(&target),
                    "{stem}: {line:?}: no edge {vertex} -> {target}"
                );
                previous = target;
                pick_count += count;
                // Only parity matters, and it keeps the values small.
                values[target as usize] += count % 2;
            }
            assert_eq!(
                pick_count,
                u64::from(game.split_counts[vertex]),
                "{stem}: {line:?}: K_{vertex} picks expected"
            );
            rounds_after.push(values);
        }
        after_moves.push(AddsubGame {
            rounds: rounds_after,
            ..game.clone()
        });
    }
    assert_eq!(
        explained.next(),
        None,
        "{stem}: more output lines than expected"
    );

    let output = run(
        &mut judge_command(Format::Addsub),
        Some(AddsubGame::to_judge_text(&after_moves).into_bytes()),
    );
    assert_eq!(output.status.code(), Some(0), "{}", lossy(&output.stderr));
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        assert!(
            line.is_empty() || line.starts_with("Game#") || line.ends_with(": LOSING"),
            "{stem}: an explained move does not win: {line}"
        );
    }
}

/// A POJ 2425 test case, for checking explained moves against the graph.
struct ChessCase {
    successors: Vec<Vec<u32>>,
    queries: Vec<Vec<u32>>,
}

impl ChessCase {
    /// Parses a well-formed judge file (test data only: panics on anything else).
    fn parse_all(text: &str) -> Vec<Self> {
        let mut numbers = text
            .split_ascii_whitespace()
            .map(|token| token.parse::<u32>().expect("test data holds numbers"));
        fn take(numbers: &mut impl Iterator<Item = u32>, count: u32) -> Vec<u32> {
            (0..count)
                .map(|_| numbers.next().expect("truncated test data"))
                .collect()
        }
        let mut cases = Vec::new();
        while let Some(vertex_count) = numbers.next() {
            let mut successors = Vec::new();
            for _ in 0..vertex_count {
                let degree = numbers.next().expect("an out-degree");
                successors.push(take(&mut numbers, degree));
            }
            let mut queries = Vec::new();
            loop {
                match numbers.next().expect("a query or 0") {
                    0 => break,
                    token_count => queries.push(take(&mut numbers, token_count)),
                }
            }
            cases.push(Self {
                successors,
                queries,
            });
        }
        cases
    }

    /// The judge file holding `cases`, one adjacency list or query per line.
    fn to_judge_text(cases: &[Self]) -> String {
        let mut lines = Vec::new();
        for case in cases {
            lines.push(case.successors.len().to_string());
            for list in case.successors.iter().chain(&case.queries) {
                let counted = std::iter::once(list.len() as u32).chain(list.iter().copied());
                lines.push(counted.map(|n| n.to_string()).collect::<Vec<_>>().join(" "));
            }
            lines.push("0".to_string());
        }
        lines.join("\n") + "\n"
    }
}

/// An LA 4411 game, for checking explained moves against the graph.
#[derive(Clone)]
pub(super) struct AddsubGame {
    pub(super) successors: Vec<Vec<u32>>,
    /// Edges in input order, to write the game back.
    pub(super) edges: Vec<(u32, u32)>,
    pub(super) split_counts: Vec<u32>,
    pub(super) rounds: Vec<Vec<u64>>,
}

impl AddsubGame {
    /// Parses a well-formed judge file (test data only: panics on anything else).
    pub(super) fn parse_all(text: &str) -> Vec<Self> {
        let mut numbers = text
            .split_ascii_whitespace()
            .map(|token| token.parse::<u64>().expect("test data holds numbers"));
        let mut next = || numbers.next().expect("truncated test data");
        let game_count = next();
        (0..game_count)
            .map(|_| {
                let (vertex_count, edge_count) = (next() as usize, next());
                let mut successors = vec![Vec::new(); vertex_count];
                let edges: Vec<(u32, u32)> = (0..edge_count)
                    .map(|_| (next() as u32, next() as u32))
                    .collect();
                for &(from, to) in &edges {
                    successors[from as usize].push(to);
                }
                let split_counts = (0..vertex_count).map(|_| next() as u32).collect();
                let round_count = next();
                let rounds = (0..round_count)
                    .map(|_| (0..vertex_count).map(|_| next()).collect())
                    .collect();
                Self {
                    successors,
                    edges,
                    split_counts,
                    rounds,
                }
            })
            .collect()
    }

    pub(super) fn to_judge_text(games: &[Self]) -> String {
        let join = |numbers: &mut dyn Iterator<Item = u64>| {
            numbers.map(|n| n.to_string()).collect::<Vec<_>>().join(" ")
        };
        let mut lines = vec![games.len().to_string()];
        for game in games {
            lines.push(format!("{} {}", game.successors.len(), game.edges.len()));
            lines.extend(game.edges.iter().map(|(from, to)| format!("{from} {to}")));
            lines.push(join(&mut game.split_counts.iter().map(|&k| u64::from(k))));
            lines.push(game.rounds.len().to_string());
            lines.extend(
                game.rounds
                    .iter()
                    .map(|round| join(&mut round.iter().copied())),
            );
        }
        lines.join("\n") + "\n"
    }
}

/// `("WIN", Some((from, to)))` for `WIN move FROM -> TO` (also `DRAW move ...`),
/// `("LOSE", None)` for `LOSE`.
fn parse_explained(line: &str) -> (&str, Option<(u32, u32)>) {
    let mut words = line.split(' ');
    let verdict = words.next().unwrap_or_default();
    let rest: Vec<&str> = words.collect();
    match rest.as_slice() {
        [] => (verdict, None),
        ["move", from, "->", to] => match (from.parse(), to.parse()) {
            (Ok(from), Ok(to)) => (verdict, Some((from, to))),
            _ => panic!("{line:?}: malformed move"),
        },
        _ => panic!("{line:?}: expected `VERDICT` or `VERDICT move FROM -> TO`"),
    }
}

/// `grundy analyse`: every `<stem>.analyse.jsonl` is the output for `<stem>.in`, exactly; and
/// independently of that recording, each line's outcome is the judge's (the `.out` file, from
/// the original C++ solutions or brute force), every chess move is listed best first, and a
/// malformed input fails as `judge` fails, with the lines of everything before it.
#[test]
fn analyse_prints_one_json_line_per_query_in_input_order() {
    let stems = [
        "chess_sample",
        "chess_cyclic_small",
        "chess_multi_edges",
        "addsub_sample",
    ];
    for stem in stems {
        let format = Format::from_stem(stem).expect("the stem names its format");
        let input_path = data_dir().join(format!("{stem}.in"));
        let output = run(analyse_command(format).arg(&input_path), None);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{stem}: {}",
            lossy(&output.stderr)
        );
        let expected = data_dir().join(format!("{stem}.analyse.jsonl"));
        if let Err(difference) = check_expected(&expected, &output.stdout, blessing()) {
            panic!("{stem}.analyse.jsonl: {difference}");
        }
        let judged = String::from_utf8(read(&data_dir().join(format!("{stem}.out")))).unwrap();
        let outcomes: Vec<&str> = judged
            .lines()
            .filter_map(|line| match format {
                Format::Chess => Some(line.trim()),
                Format::Addsub => line.strip_prefix("Round#")?.split(": ").nth(1),
            })
            .collect();
        let lines: Vec<serde_json::Value> = String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).expect("each line is a JSON object"))
            .collect();
        assert_eq!(lines.len(), outcomes.len(), "{stem}: one line per query");
        for (line, judged) in lines.iter().zip(&outcomes) {
            let outcome = line["outcome"].as_str().unwrap();
            let expected = match *judged {
                "WINNING" => "WIN",
                "LOSING" => "LOSE",
                other => other,
            };
            assert_eq!(outcome, expected, "{stem}: {line}");
            if format == Format::Chess {
                check_best_first(stem, line);
            }
        }
    }
    let bad = data_dir().join("bad_chess_token_out_of_range.in");
    let output = run(analyse_command(Format::Chess).arg(&bad), None);
    assert_eq!(output.status.code(), Some(EXIT_BAD_INPUT));
    let judged = run(judge_command(Format::Chess).arg(&bad), None);
    assert_eq!(lossy(&output.stderr), lossy(&judged.stderr));
    assert_eq!(
        String::from_utf8(output.stdout).unwrap().lines().count(),
        String::from_utf8(judged.stdout).unwrap().lines().count(),
        "the lines of everything before the error are printed"
    );
}

/// Winning moves by increasing remoteness, then drawing moves, then losing moves by
/// decreasing remoteness; the position's remoteness follows from its best move.
fn check_best_first(stem: &str, line: &serde_json::Value) {
    let rank = |m: &serde_json::Value| match m["outcome"].as_str().unwrap() {
        "WIN" => (0, m["remoteness"].as_i64().unwrap_or(i64::MAX)),
        "DRAW" => (1, 0),
        _ => (2, -m["remoteness"].as_i64().unwrap_or(i64::MIN + 1)),
    };
    let moves = line["moves"].as_array().unwrap();
    for pair in moves.windows(2) {
        assert!(
            rank(&pair[0]) <= rank(&pair[1]),
            "{stem}: not best first: {line}"
        );
    }
    let remoteness = line["remoteness"].as_i64();
    match (line["outcome"].as_str().unwrap(), moves.first()) {
        ("LOSE", None) => assert_eq!(remoteness, Some(0), "{stem}: {line}"),
        ("WIN" | "LOSE", Some(best)) => assert_eq!(
            remoteness,
            best["remoteness"].as_i64().map(|r| r + 1),
            "{stem}: {line}"
        ),
        ("DRAW", _) => assert_eq!(remoteness, None, "{stem}: {line}"),
        _ => panic!("{stem}: {line}"),
    }
}

fn analyse_command(format: Format) -> Command {
    let mut command = Command::new(GRUNDY);
    command
        .args(["analyse", format.subcommand_arg()])
        .env_remove("RUST_LOG")
        .env_remove("GRUNDY_SERVER");
    command
}
