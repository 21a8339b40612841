//! `grundy render` end to end: the binary, its embedded server over real gRPC, and the
//! picture it prints, parsed back as XML.

use std::process::Command;

use crate::support::http1::exchange_at;
use crate::support::process::{RunOutput, ServerProcess, run};

const GRUNDY: &str = env!("CARGO_BIN_EXE_grundy");
const GRUNDY_SERVER: &str = env!("CARGO_BIN_EXE_grundy-server");

fn render(args: &[&str], stdin: &str) -> RunOutput {
    run(
        Command::new(GRUNDY)
            .arg("render")
            .args(args)
            .env_remove("GRUNDY_SERVER"),
        Some(stdin.as_bytes().to_vec()),
    )
}

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// (vertex, value, outcome, tokens) of every vertex, from an SVG that must be well-formed.
fn vertices(svg: &str) -> Vec<(String, String, String, String)> {
    let document = roxmltree::Document::parse(svg).expect("well-formed SVG");
    assert_eq!(document.root_element().tag_name().name(), "svg");
    document
        .descendants()
        .filter(|n| n.attribute("class") == Some("vertex"))
        .map(|n| {
            // The value attribute and the drawn label agree.
            let label = n
                .descendants()
                .find(|t| t.attribute("class") == Some("value"))
                .and_then(|t| t.text())
                .unwrap();
            assert_eq!(n.attribute("data-value"), Some(label));
            let attribute = |name| n.attribute(name).unwrap().to_string();
            (
                attribute("data-vertex"),
                attribute("data-value"),
                attribute("data-outcome"),
                attribute("data-tokens"),
            )
        })
        .collect()
}

fn row(v: &str, value: &str, outcome: &str, tokens: &str) -> (String, String, String, String) {
    (v.into(), value.into(), outcome.into(), tokens.into())
}

#[test]
fn the_sample_is_drawn_with_its_values_tokens_and_winning_move() {
    let output = render(&[&data("chess_sample.in"), "--tokens", "0,2"], "");
    assert!(output.status.success(), "{output:?}");
    let svg = String::from_utf8(output.stdout).unwrap();
    // Test case 1: 0 -> {1, 2}, 2 -> 3; values mex{0, 1} = 2, 0, mex{0} = 1, 0.
    assert_eq!(
        vertices(&svg),
        vec![
            row("0", "2", "win", "1"),
            row("1", "0", "lose", "0"),
            row("2", "1", "win", "1"),
            row("3", "0", "lose", "0"),
        ]
    );
    assert!(svg.contains("tokens 0 2: WIN, nim-sum 3"), "{svg}");
    // The winning move: 0 -> 2 (2 xor 1 = 3; moving to value 1 leaves 1 xor 1 = 0).
    assert!(
        svg.contains("class=\"edge move\" data-from=\"0\" data-to=\"2\""),
        "{svg}"
    );
}

#[test]
fn a_cyclic_case_shows_infinite_values_as_draws() {
    let output = render(&[&data("chess_cyclic_small.in"), "--case", "1"], "");
    assert!(output.status.success(), "{output:?}");
    let svg = String::from_utf8(output.stdout).unwrap();
    // One vertex with a self-loop: ∞ with no finite follower, a draw.
    assert_eq!(vertices(&svg), vec![row("0", "∞()", "draw", "0")]);
}

#[test]
fn addsub_renders_as_dot_with_split_counts_from_stdin() {
    let sample = std::fs::read_to_string(data("addsub_sample.in")).unwrap();
    let output = render(&["--game", "addsub", "--format", "dot", "-"], &sample);
    assert!(output.status.success(), "{output:?}");
    let dot = String::from_utf8(output.stdout).unwrap();
    assert!(dot.starts_with("digraph grundy {"), "{dot}");
    assert!(dot.contains("K=2"), "{dot}");
    assert!(dot.trim_end().ends_with('}'), "{dot}");
}

#[test]
fn errors_name_the_case_and_suggest_dot_for_large_graphs() {
    let output = render(&[&data("chess_sample.in"), "--case", "3"], "");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--case 3: the input has only 2 test cases"),
        "{stderr}"
    );

    let output = render(&[&data("chess_sample.in"), "--tokens", "0,9"], "");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--tokens[1]: vertex 9 is out of range"),
        "{stderr}"
    );

    // A chain of 400 vertices, then the end of the test case.
    let mut chain = String::from("400\n");
    for v in 0..400 {
        chain.push_str(&if v < 399 {
            format!("1 {}\n", v + 1)
        } else {
            "0\n".into()
        });
    }
    chain.push_str("0\n");
    let output = render(&[], &chain);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("too large to draw readably"), "{stderr}");
    assert!(stderr.contains("--format dot"), "{stderr}");
    let output = render(&["--format", "dot"], &chain);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stdout)
            .unwrap()
            .matches(" -> ")
            .count(),
        399
    );
}

/// `GET {path}` of the server at `address`: (status, body).
fn get(address: std::net::SocketAddr, path: &str) -> (u16, Vec<u8>) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (status, _, body) =
        runtime.block_on(exchange_at(address, &format!("GET {path} HTTP/1.1"), b""));
    (status, body)
}

#[test]
fn a_picture_fetched_by_url_is_the_one_render_prints() {
    let server = ServerProcess::start(GRUNDY_SERVER, &[]);
    // Test case 1 of the sample, registered by JSON (as a page or a notebook would).
    let graph = br#"{"vertexCount": 4, "outDegrees": [2,0,1,0], "targets": [1,2,3]}"#;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (status, _, body) = runtime.block_on(exchange_at(
        server.address,
        "POST /v1/graphs HTTP/1.1",
        graph,
    ));
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let answer: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let id = answer["graphId"].as_str().unwrap();
    let url = server.url();
    let cases = [
        (Some("0,2"), "svg", false),
        (None, "svg", false),
        (Some("2"), "dot", false),
        (Some("0,2"), "svg", true),
    ];
    for (tokens, format, misere) in cases {
        let mut args = vec![data("chess_sample.in"), "--format".into(), format.into()];
        args.extend(["--server".into(), url.clone()]);
        // The CLI labels a test case by its number and line.
        let mut query = format!("label=test%20case%201%20(line%201)&format={format}");
        if misere {
            args.push("--misere".into());
            query.push_str("&convention=misere");
        }
        if let Some(tokens) = tokens {
            args.extend(["--tokens".into(), tokens.into()]);
            query.push_str(&format!("&tokens={tokens}"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let printed = render(&args, "");
        assert!(printed.status.success(), "{printed:?}");
        let (status, picture) = get(
            server.address,
            &format!("/v1/graphs/{id}/picture.svg?{query}"),
        );
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&picture));
        assert_eq!(
            String::from_utf8(picture).unwrap(),
            String::from_utf8(printed.stdout).unwrap(),
            "tokens {tokens:?}, {format}, misère {misere}"
        );
    }
    // An unknown graph and a token out of range are the JSON API's errors.
    let (status, body) = get(
        server.address,
        &format!("/v1/graphs/{}/picture.svg", "0".repeat(64)),
    );
    assert_eq!(status, 404, "{}", String::from_utf8_lossy(&body));
    let (status, body) = get(
        server.address,
        &format!("/v1/graphs/{id}/picture.svg?tokens=0,4"),
    );
    assert_eq!(status, 400);
    let error: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        error["details"][1]["fieldViolations"][0]["field"],
        "tokens[1]"
    );
}
