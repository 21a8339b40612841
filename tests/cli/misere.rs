//! `--misere` through the real `grundy` binary: golden files (`tests/data/misere_*`), every
//! line and JSON object judged by the brute force of `support/misere_oracle.rs`, random small
//! graphs with every position of 1 to 4 tokens through `grundy analyse chess --misere`, and
//! a query over the position budget.

use std::process::Command;

use crate::judge::{GRUNDY, blessing, check_expected, data_dir};
use crate::support::misere_oracle::{MisereOracle, OracleMove, Verdict};
use crate::support::process::run;

/// A chess test case: vertices, edges and queries.
type Case = (u32, Vec<(u32, u32)>, Vec<Vec<u32>>);

/// Reads a chess judge file (well-formed: the test writes or keeps it).
fn parse_chess(text: &str) -> Vec<Case> {
    let mut numbers = text.split_whitespace().map(|w| w.parse::<u32>().unwrap());
    let mut cases = Vec::new();
    while let Some(n) = numbers.next() {
        let mut edges = Vec::new();
        for from in 0..n {
            let degree = numbers.next().unwrap();
            for _ in 0..degree {
                edges.push((from, numbers.next().unwrap()));
            }
        }
        let mut queries = Vec::new();
        loop {
            let m = numbers.next().unwrap();
            if m == 0 {
                break;
            }
            queries.push((0..m).map(|_| numbers.next().unwrap()).collect());
        }
        cases.push((n, edges, queries));
    }
    cases
}

fn write_chess(cases: &[Case]) -> String {
    let mut text = String::new();
    for (n, edges, queries) in cases {
        text.push_str(&format!("{n}\n"));
        for v in 0..*n {
            let followers: Vec<String> = edges
                .iter()
                .filter(|&&(from, _)| from == v)
                .map(|&(_, to)| to.to_string())
                .collect();
            text.push_str(&format!("{} {}\n", followers.len(), followers.join(" ")));
        }
        for query in queries {
            let tokens: Vec<String> = query.iter().map(u32::to_string).collect();
            text.push_str(&format!("{} {}\n", query.len(), tokens.join(" ")));
        }
        text.push_str("0\n");
    }
    text
}

fn grundy(args: &[&str]) -> Command {
    let mut command = Command::new(GRUNDY);
    command
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("GRUNDY_SERVER");
    command
}

fn verdict_named(word: &str) -> Verdict {
    match word {
        "WIN" => Verdict::Win,
        "LOSE" => Verdict::Lose,
        "DRAW" => Verdict::Draw,
        other => panic!("not an outcome: {other}"),
    }
}

/// Checks the judge lines and the JSON lines of `analyse` of `cases` against the oracle.
fn check_against_oracle(what: &str, cases: &[Case], judged: &str, analysed: &str) {
    let mut lines = judged.lines();
    let mut objects = analysed.lines();
    for (n, edges, queries) in cases {
        for query in queries {
            let oracle = MisereOracle::solve(*n, edges, query.len());
            let (outcome, remoteness) = oracle.verdict(query);
            let context = format!("{what}: graph {n} {edges:?}, tokens {query:?}");
            assert_eq!(verdict_named(lines.next().unwrap()), outcome, "{context}");
            let object: serde_json::Value = serde_json::from_str(objects.next().unwrap()).unwrap();
            let word = object["outcome"].as_str().unwrap();
            assert_eq!(verdict_named(word), outcome, "{context}");
            assert_eq!(object["nim_sum"], 0, "{context}");
            let got = object["remoteness"].as_u64().map(|r| r as u32);
            assert_eq!(got, remoteness, "{context}");
            let moves: Vec<OracleMove> = object["moves"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| OracleMove {
                    from: m["from"].as_u64().unwrap() as u32,
                    to: m["to"].as_u64().unwrap() as u32,
                    outcome: verdict_named(m["outcome"].as_str().unwrap()),
                    remoteness: m["remoteness"].as_u64().map(|r| r as u32),
                })
                .collect();
            assert_eq!(moves, oracle.moves(query), "{context}");
        }
    }
    assert_eq!(lines.next(), None, "{what}: extra judge lines");
    assert_eq!(objects.next(), None, "{what}: extra JSON lines");
}

#[test]
fn misere_golden_files_match_the_brute_force() {
    let bless = blessing();
    for stem in ["misere_sample", "misere_cyclic_small"] {
        let input = data_dir().join(format!("{stem}.in"));
        let judged = run(grundy(&["judge", "chess", "--misere"]).arg(&input), None);
        assert!(judged.status.success(), "{stem}: {judged:?}");
        let expected = data_dir().join(format!("{stem}.out"));
        check_expected(&expected, &judged.stdout, bless).unwrap_or_else(|d| panic!("{d}"));
        let analysed = run(grundy(&["analyse", "chess", "--misere"]).arg(&input), None);
        assert!(analysed.status.success(), "{stem}: {analysed:?}");
        let expected = data_dir().join(format!("{stem}.analyse.jsonl"));
        check_expected(&expected, &analysed.stdout, bless).unwrap_or_else(|d| panic!("{d}"));
        let cases = parse_chess(&std::fs::read_to_string(&input).unwrap());
        let judged = String::from_utf8(judged.stdout).unwrap();
        let analysed = String::from_utf8(analysed.stdout).unwrap();
        check_against_oracle(stem, &cases, &judged, &analysed);
        // --explain: each WIN and DRAW line names the oracle's best move.
        let explained = run(
            grundy(&["judge", "chess", "--misere", "--explain"]).arg(&input),
            None,
        );
        assert!(explained.status.success(), "{stem}: {explained:?}");
        let expected = data_dir().join(format!("{stem}.moves.out"));
        check_expected(&expected, &explained.stdout, bless).unwrap_or_else(|d| panic!("{d}"));
        let explained = String::from_utf8(explained.stdout).unwrap();
        let mut lines = explained.lines();
        for (n, edges, queries) in &cases {
            for query in queries {
                let oracle = MisereOracle::solve(*n, edges, query.len());
                let line = lines.next().unwrap();
                let best = oracle.moves(query).into_iter().next();
                let expected = match (oracle.verdict(query).0, best) {
                    (Verdict::Win, Some(m)) => format!("WIN move {} -> {}", m.from, m.to),
                    (Verdict::Draw, Some(m)) => format!("DRAW move {} -> {}", m.from, m.to),
                    (Verdict::Draw, None) => "DRAW".to_string(),
                    (Verdict::Lose, _) => "LOSE".to_string(),
                    (Verdict::Win, None) => "WIN".to_string(),
                };
                assert_eq!(line, expected, "{stem}: tokens {query:?}");
            }
        }
    }
}

#[test]
fn misere_judge_and_analyse_match_the_brute_force_on_random_graphs() {
    let mut state = 0x636c_695f_6d69u64;
    let mut next = move |bound: u32| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % u64::from(bound)) as u32
    };
    let mut cases: Vec<Case> = Vec::new();
    for graph in 0..16 {
        let acyclic = graph % 2 == 0;
        let n = 1 + next(4);
        let mut edges = Vec::new();
        for _ in 0..next(3 * n + 1) {
            let (a, b) = (next(n), next(n));
            if !acyclic {
                edges.push((a, b));
            } else if a != b {
                edges.push((a.min(b), a.max(b)));
            }
        }
        let mut queries = Vec::new();
        for k in 1..=4 {
            queries.extend(
                MisereOracle::solve(n, &edges, k)
                    .positions()
                    .iter()
                    .cloned(),
            );
        }
        cases.push((n, edges, queries));
    }
    let text = write_chess(&cases).into_bytes();
    let judged = run(
        &mut grundy(&["judge", "chess", "--misere"]),
        Some(text.clone()),
    );
    assert!(judged.status.success(), "{judged:?}");
    let analysed = run(&mut grundy(&["analyse", "chess", "--misere"]), Some(text));
    assert!(analysed.status.success(), "{analysed:?}");
    let judged = String::from_utf8(judged.stdout).unwrap();
    let analysed = String::from_utf8(analysed.stdout).unwrap();
    check_against_oracle("random graphs", &cases, &judged, &analysed);
}

#[test]
fn misere_query_over_the_position_budget_is_an_error_naming_its_case_and_query() {
    let input = data_dir().join("misere_over_budget.in");
    let output = run(
        grundy(&["judge", "chess", "--misere", "--position-budget", "100"]).arg(&input),
        None,
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let bless = blessing();
    let expected = data_dir().join("misere_over_budget.out");
    check_expected(&expected, &output.stdout, bless).unwrap_or_else(|d| panic!("{d}"));
    let expected = data_dir().join("misere_over_budget.err");
    check_expected(&expected, &output.stderr, bless).unwrap_or_else(|d| panic!("{d}"));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("(line 1)") && stderr.contains("query 2"),
        "{stderr}"
    );
    assert!(stderr.contains("--position-budget"), "{stderr}");
}

#[test]
fn misere_addsub_is_refused_naming_the_convention_and_the_game() {
    let input = data_dir().join("addsub_sample.in");
    let output = run(grundy(&["judge", "addsub", "--misere"]).arg(&input), None);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("--misere") && stderr.contains("Addition-Subtraction"),
        "{stderr}"
    );
}

#[test]
fn misere_render_shows_outcome_letters_and_the_misere_verdict() {
    let input = data_dir().join("misere_sample.in");
    let output = run(
        grundy(&[
            "render", "--case", "3", "--misere", "--format", "dot", "--tokens", "0",
        ])
        .arg(&input),
        None,
    );
    assert!(output.status.success(), "{output:?}");
    let dot = String::from_utf8(output.stdout).unwrap();
    // The worked example: 0 is L3, 1 W2, 2 L1, 3 W0 (a vertex without moves wins).
    for label in ["0\\nL3", "1\\nW2", "2\\nL1", "3\\nW0"] {
        assert!(dot.contains(label), "{label}: {dot}");
    }
    assert!(dot.contains("tokens 0: LOSE (misère)"), "{dot}");
    assert!(!dot.contains("nim-value"), "{dot}");
}
