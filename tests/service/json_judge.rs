//! The README's judge files answered through JSON over HTTP: each test case of
//! `examples/chess.in` and each game of `examples/addsub.in`, read by the judge-format model
//! of `tests/support/`, becomes one `POST /v1:evaluate` with the graph inline; the verdicts,
//! printed as `grundy judge` prints them, must be the golden output of the same file.

use serde_json::{Value, json};

use crate::support::http1::exchange;
use crate::support::judge_model::{Event, Format, parse};
use crate::support::server::{TestServer, serve, server_config};

/// One test case (chess) or game (addsub): the graph in JSON and the token list of each
/// query (for addsub, a token on each vertex whose value is odd).
struct Case {
    graph: Value,
    queries: Vec<Vec<u32>>,
}

/// The cases of the judge file `input` in `format`, as the judge-format model reads them.
fn cases(format: Format, input: &[u8]) -> Vec<Case> {
    let parsed = parse(format, input);
    assert_eq!(parsed.error, None, "the sample is a valid judge file");
    let mut cases = Vec::new();
    for (event, _) in parsed.events {
        match event {
            Event::Graph {
                out_degrees,
                targets,
                ..
            } => cases.push(Case {
                graph: json!({
                    "vertexCount": out_degrees.len(),
                    "outDegrees": out_degrees,
                    "targets": targets,
                }),
                queries: Vec::new(),
            }),
            Event::Game {
                vertex_count,
                edges,
                split_counts,
                ..
            } => {
                // The edge list in the proto's CSR form: each vertex's out-neighbours in turn.
                let mut out_degrees = vec![0u32; vertex_count as usize];
                let mut sorted = edges;
                sorted.sort_by_key(|&(from, _)| from);
                for &(from, _) in &sorted {
                    out_degrees[from as usize] += 1;
                }
                let targets: Vec<u32> = sorted.iter().map(|&(_, to)| to).collect();
                cases.push(Case {
                    graph: json!({
                        "vertexCount": vertex_count,
                        "outDegrees": out_degrees,
                        "targets": targets,
                        "splitCounts": split_counts,
                    }),
                    queries: Vec::new(),
                });
            }
            Event::Query(tokens) | Event::Round(tokens) => {
                cases
                    .last_mut()
                    .expect("a query after its graph")
                    .queries
                    .push(tokens);
            }
            Event::End => {}
        }
    }
    cases
}

/// The outcome of each query of `case`, from `POST /v1:evaluate`, in the order asked.
async fn outcomes_over_json(server: &TestServer, case: &Case) -> Vec<String> {
    let queries: Vec<Value> = case
        .queries
        .iter()
        .enumerate()
        .map(|(id, tokens)| json!({"id": id, "tokens": {"vertices": tokens}}))
        .collect();
    let body = json!({"start": {"graph": case.graph}, "queries": queries}).to_string();
    let (status, _, answer) = exchange(
        server,
        "POST /v1:evaluate HTTP/1.1\r\nContent-Type: application/json",
        body.as_bytes(),
    )
    .await;
    let answer: Value = serde_json::from_slice(&answer).expect("a JSON answer");
    assert_eq!(status, 200, "{answer}");
    let verdicts: Vec<&Value> = answer
        .as_array()
        .expect("an array of responses")
        .iter()
        .flat_map(|response| response["verdicts"].as_array().unwrap())
        .collect();
    assert_eq!(verdicts.len(), case.queries.len(), "a verdict per query");
    verdicts
        .iter()
        .enumerate()
        .map(|(id, verdict)| {
            assert_eq!(verdict["queryId"], id.to_string(), "verdicts in order");
            verdict["outcome"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// The outcomes of every case of `input`, printed as `grundy judge` prints them.
async fn judge_over_json(format: Format, input: &[u8]) -> String {
    let server = serve(server_config()).await;
    let mut printed = String::new();
    for (game, case) in cases(format, input).iter().enumerate() {
        let outcomes = if case.queries.is_empty() {
            Vec::new()
        } else {
            outcomes_over_json(&server, case).await
        };
        if format == Format::Addsub {
            printed += &format!("Game#{}:\n", game + 1);
        }
        for (round, outcome) in outcomes.iter().enumerate() {
            let word = match (format, outcome.as_str()) {
                (Format::Chess, "OUTCOME_WIN") => "WIN",
                (Format::Chess, "OUTCOME_LOSE") => "LOSE",
                (Format::Chess, "OUTCOME_DRAW") => "DRAW",
                (Format::Addsub, "OUTCOME_WIN") => "WINNING",
                (Format::Addsub, "OUTCOME_LOSE") => "LOSING",
                (Format::Addsub, "OUTCOME_DRAW") => "DRAWING",
                (_, other) => panic!("no judge word for {other}"),
            };
            match format {
                Format::Chess => printed += &format!("{word}\n"),
                Format::Addsub => printed += &format!("Round#{}: {word}\n", round + 1),
            }
        }
        if format == Format::Addsub {
            printed.push('\n');
        }
    }
    printed
}

/// The README's sample `examples/{name}.in` and its golden output (the README's, byte for
/// byte), kept as `tests/data/{name}_sample.{in,out}`.
fn readme_sample(name: &str) -> (Vec<u8>, String) {
    let root = env!("CARGO_MANIFEST_DIR");
    let input = std::fs::read(format!("{root}/examples/{name}.in")).unwrap();
    let golden_input = std::fs::read(format!("{root}/tests/data/{name}_sample.in")).unwrap();
    assert_eq!(
        input, golden_input,
        "the golden output is of the README's file"
    );
    let output = std::fs::read_to_string(format!("{root}/tests/data/{name}_sample.out")).unwrap();
    (input, output)
}

#[tokio::test]
async fn chess_sample_over_json_prints_the_judge_output() {
    let (input, expected) = readme_sample("chess");
    assert_eq!(judge_over_json(Format::Chess, &input).await, expected);
}

#[tokio::test]
async fn addsub_sample_with_split_counts_over_json_prints_the_judge_output() {
    let (input, expected) = readme_sample("addsub");
    assert_eq!(judge_over_json(Format::Addsub, &input).await, expected);
}
