//! `grundy-server` processes sharing a graph store: three replicas on one Redis (ignored
//! unless asked for: `scripts/fleet-test.sh` starts Redis and runs them), a `--store-dir`
//! server killed with SIGKILL and restarted, and a Redis nobody listens on.

use crate::support::replica::Replica;
use crate::support::server::{sample_graph, tokens};
use grundy::proto::{
    self, EvaluateBatchRequest, EvaluateStart, GetValuesRequest, PutGraphRequest,
    evaluate_start::GraphSource, vertex_value,
};
use tonic::Code;

/// Registers `graph` in two chunks (degrees, then targets); returns its id.
async fn put_graph(replica: &Replica, graph: proto::Graph) -> Result<String, tonic::Status> {
    let first = proto::Graph {
        targets: vec![],
        ..graph.clone()
    };
    let second = proto::Graph {
        vertex_count: 0,
        out_degrees: vec![],
        targets: graph.targets,
        split_counts: vec![],
        fixed_targets: vec![],
    };
    let chunks = [first, second].map(|chunk| PutGraphRequest { chunk: Some(chunk) });
    let response = replica
        .client()
        .await
        .put_graph(tokio_stream::iter(chunks))
        .await?;
    Ok(response.into_inner().graph_id)
}

/// Outcomes of the sample graph's queries {0}, {1}, {2}, {0, 2}, evaluated by id.
async fn outcomes_by_id(replica: &Replica, graph_id: &str) -> Result<Vec<i32>, tonic::Status> {
    evaluate(replica, GraphSource::GraphId(graph_id.to_string())).await
}

async fn evaluate(replica: &Replica, source: GraphSource) -> Result<Vec<i32>, tonic::Status> {
    let request = EvaluateBatchRequest {
        start: Some(EvaluateStart {
            graph_source: Some(source),
            explain: false,
            analysis: None,
            play_convention: 0,
        }),
        queries: vec![
            tokens(1, &[0]),
            tokens(2, &[1]),
            tokens(3, &[2]),
            tokens(4, &[0, 2]),
        ],
    };
    let mut stream = replica
        .client()
        .await
        .evaluate_batch(request)
        .await?
        .into_inner();
    let mut outcomes = Vec::new();
    while let Some(response) = stream.message().await? {
        outcomes.extend(response.verdicts.iter().map(|v| v.outcome));
    }
    Ok(outcomes)
}

/// The sample graph's values 2, 0, 1, 0 read back with GetValues.
async fn values_by_id(replica: &Replica, graph_id: &str) -> Vec<u64> {
    let request = GetValuesRequest {
        graph_id: graph_id.to_string(),
        ..Default::default()
    };
    let mut stream = replica
        .client()
        .await
        .get_values(request)
        .await
        .expect("GetValues")
        .into_inner();
    let mut values = Vec::new();
    while let Some(page) = stream.message().await.expect("a page") {
        for value in page.values {
            match value.value {
                Some(vertex_value::Value::Finite(v)) => values.push(v),
                other => panic!("a finite value, got {other:?}"),
            }
        }
    }
    values
}

fn expected_outcomes() -> Vec<i32> {
    use proto::Outcome::{Lose, Win};
    // Values 2, 0, 1, 0: {0} WIN, {1} LOSE, {2} WIN, {0, 2} nim-sum 3 WIN.
    [Win, Lose, Win, Win].map(|o| o as i32).to_vec()
}

/// The URL of the test Redis that scripts/with-redis.sh starts; the tests that need one are
/// ignored by a plain `cargo test` and run by `scripts/fleet-test.sh`.
fn redis_url() -> String {
    std::env::var("GRUNDY_TEST_REDIS_URL")
        .expect("GRUNDY_TEST_REDIS_URL: run under scripts/with-redis.sh")
}

#[tokio::test]
#[ignore = "needs Redis: scripts/fleet-test.sh runs it"]
async fn a_graph_registered_on_one_replica_is_known_to_the_others() {
    let url = redis_url();
    let env = [
        ("GRUNDY_STORE_URL", url.as_str()),
        ("GRUNDY_STORE_TTL", "10m"),
    ];
    let replicas = [
        Replica::start(&env).await,
        Replica::start(&env).await,
        Replica::start(&env).await,
    ];
    let graph_id = put_graph(&replicas[0], sample_graph())
        .await
        .expect("PutGraph");
    for replica in &replicas[1..] {
        let outcomes = outcomes_by_id(replica, &graph_id)
            .await
            .expect("known by id");
        assert_eq!(outcomes, expected_outcomes());
        assert_eq!(values_by_id(replica, &graph_id).await, [2, 0, 1, 0]);
    }
    // An id no replica registered is still NOT_FOUND everywhere.
    let unknown = outcomes_by_id(&replicas[2], &"0".repeat(64))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound, "{unknown:?}");
}

#[tokio::test]
#[ignore = "needs Redis: scripts/fleet-test.sh runs it"]
async fn a_forged_manifest_announcing_a_huge_graph_is_a_corrupt_entry_not_a_crash() {
    let url = redis_url();
    let env = [("GRUNDY_STORE_URL", url.as_str())];
    let writer = Replica::start(&env).await;
    let graph_id = put_graph(&writer, sample_graph()).await.expect("PutGraph");
    let mut redis = redis::Client::open(url.as_str())
        .expect("a valid URL")
        .get_multiplexed_async_connection()
        .await
        .expect("Redis reachable");
    // A reader that has not cached the graph reads the manifest.
    let reader = Replica::start(&env).await;
    for bytes in ["40000000000", "18446744073709551615"] {
        let manifest = format!("grundy-graph/1 bytes={bytes} chunks=1 chunk_bytes={bytes}");
        let () = redis::cmd("SET")
            .arg(format!("grundy:graph:{graph_id}"))
            .arg(manifest)
            .query_async(&mut redis)
            .await
            .expect("SET");
        for _ in 0..2 {
            let refused = outcomes_by_id(&reader, &graph_id).await.unwrap_err();
            assert_eq!(refused.code(), Code::NotFound, "{refused:?}");
            assert!(refused.message().contains("corrupt"), "{refused:?}");
        }
    }
    // Registering the graph again repairs the entry, on the same (still running) reader.
    put_graph(&reader, sample_graph()).await.expect("PutGraph");
    let other = Replica::start(&env).await;
    let outcomes = outcomes_by_id(&other, &graph_id).await.expect("repaired");
    assert_eq!(outcomes, expected_outcomes());
}

#[tokio::test]
async fn ids_in_a_store_dir_survive_kill_9() {
    let dir = std::env::temp_dir().join(format!("grundy-fleet-durable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_text = dir.to_str().expect("a UTF-8 temp path").to_string();
    let env = [("GRUNDY_STORE_DIR", dir_text.as_str())];
    let first = Replica::start(&env).await;
    let graph_id = put_graph(&first, sample_graph()).await.expect("PutGraph");
    first.kill();
    let restarted = Replica::start(&env).await;
    let outcomes = outcomes_by_id(&restarted, &graph_id)
        .await
        .expect("still known");
    assert_eq!(outcomes, expected_outcomes());
    assert_eq!(values_by_id(&restarted, &graph_id).await, [2, 0, 1, 0]);
    drop(restarted);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn an_unreachable_redis_fails_put_graph_but_not_inline_graphs() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("redis://127.0.0.1:{port}/0");
    let replica = Replica::start(&[("GRUNDY_STORE_URL", url.as_str())]).await;
    let refused = put_graph(&replica, sample_graph()).await.unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert!(
        refused.message().contains(&format!("127.0.0.1:{port}")),
        "{refused:?}"
    );
    let by_id = outcomes_by_id(&replica, &"a".repeat(64)).await.unwrap_err();
    assert_eq!(by_id.code(), Code::Unavailable, "{by_id:?}");
    // The failed PutGraph registered nothing, not even in the replica's cache: its id is
    // looked up in the (unreachable) store like any other.
    let game = grundy::service::game_from_proto(sample_graph()).expect("a valid graph");
    let refused_id = grundy::service::graph_id_sync(&game);
    let after_failure = outcomes_by_id(&replica, &refused_id).await.unwrap_err();
    assert_eq!(after_failure.code(), Code::Unavailable, "{after_failure:?}");
    let inline = evaluate(&replica, GraphSource::Graph(sample_graph())).await;
    assert_eq!(
        inline.expect("inline graphs need no store"),
        expected_outcomes()
    );
}
