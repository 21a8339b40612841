//! Client-supplied numbers at their extremes, fed to every RPC by a property test: values of
//! dense and sparse positions (whose sums overflow), token counts, analysis options and
//! budgets, page ranges. Whatever they are, each query gets one verdict (an in-band error
//! where it is malformed), a call that fails does so with a status naming its cause (never
//! INTERNAL, UNKNOWN, or a server that is gone), and the next call is answered as usual.

use grundy::proto::{
    self, EvaluateBatchRequest, EvaluateStart, GetValuesRequest, Query,
    evaluate_start::GraphSource, query::Position,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tonic::Code;

use crate::support::server::{TestServer, sample_graph, serve_service, service_config, tokens};

/// A u64 drawn towards the values that break arithmetic: 0, 1, powers of two near the top,
/// the largest, and anything.
fn extreme_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0),
        Just(1),
        Just(u64::MAX),
        Just(u64::MAX - 1),
        Just(1 << 63),
        Just(1 << 40),
        (0..64u32).prop_map(|shift| 1u64 << shift),
        0..10u64,
        any::<u64>(),
    ]
}

fn extreme_u32() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0), Just(1), Just(u32::MAX), 0..8u32, any::<u32>()]
}

/// A query on [`sample_graph`] (4 vertices) in any form, with vertices mostly in range.
fn query() -> impl Strategy<Value = Query> {
    let vertex = prop_oneof![4 => 0..4u32, 1 => extreme_u32()];
    let form = prop_oneof![
        prop::collection::vec(vertex.clone(), 0..6)
            .prop_map(|vertices| { Position::Tokens(proto::TokenPosition { vertices }) }),
        prop::collection::vec(extreme_u64(), 4..=4)
            .prop_map(|values| Position::DenseValues(proto::DenseValues { values })),
        prop::collection::vec((vertex, extreme_u64()), 0..5).prop_map(|pairs| {
            let (vertices, values) = pairs.into_iter().unzip();
            Position::SparseValues(proto::SparseValues { vertices, values })
        }),
    ];
    (any::<u64>(), form).prop_map(|(id, position)| Query {
        id,
        position: Some(position),
    })
}

/// The `start` of a batch: the sample graph, with or without moves, with analysis options of
/// any size.
fn start() -> impl Strategy<Value = EvaluateStart> {
    let analysis = prop::option::of((extreme_u32(), extreme_u64()).prop_map(
        |(max_moves, position_budget)| proto::AnalysisOptions {
            max_moves,
            position_budget,
        },
    ));
    (any::<bool>(), analysis).prop_map(|(explain, analysis)| EvaluateStart {
        graph_source: Some(GraphSource::Graph(sample_graph())),
        explain,
        analysis,
        play_convention: 0,
    })
}

/// Whether a status is one the server chose for a cause it names, not a crash.
fn named_cause(status: &tonic::Status) -> bool {
    !matches!(
        status.code(),
        Code::Internal | Code::Unknown | Code::Unavailable
    )
}

/// Every query of an `EvaluateBatch` of any numbers gets one verdict, in order.
async fn evaluate_batch(
    server: &TestServer,
    start: EvaluateStart,
    queries: Vec<Query>,
) -> Result<(), TestCaseError> {
    let mut client = server.client().await;
    let ids: Vec<u64> = queries.iter().map(|query| query.id).collect();
    let request = EvaluateBatchRequest {
        start: Some(start),
        queries,
    };
    let mut stream = match client.evaluate_batch(request).await {
        Ok(response) => response.into_inner(),
        Err(status) => {
            prop_assert!(named_cause(&status), "{status:?}");
            return Ok(());
        }
    };
    let mut answered = Vec::new();
    loop {
        match stream.message().await {
            Ok(Some(message)) => answered.extend(message.verdicts.iter().map(|v| v.query_id)),
            Ok(None) => break,
            Err(status) => {
                prop_assert!(named_cause(&status), "{status:?}");
                return Ok(());
            }
        }
    }
    prop_assert_eq!(answered, ids);
    Ok(())
}

/// `GetValues` of any range and page size answers or refuses with a named cause.
async fn get_values(
    server: &TestServer,
    graph_id: &str,
    (first_vertex, vertex_limit, page_size): (u32, u32, u32),
) -> Result<(), TestCaseError> {
    let mut client = server.client().await;
    let request = GetValuesRequest {
        graph_id: graph_id.to_owned(),
        first_vertex,
        vertex_limit,
        page_size,
        summary_only: false,
        play_convention: 0,
    };
    let mut stream = match client.get_values(request).await {
        Ok(response) => response.into_inner(),
        Err(status) => {
            prop_assert!(named_cause(&status), "{status:?}");
            return Ok(());
        }
    };
    let mut values = 0u64;
    loop {
        match stream.message().await {
            Ok(Some(message)) => values += message.values.len() as u64,
            Ok(None) => break,
            Err(status) => {
                prop_assert!(named_cause(&status), "{status:?}");
                return Ok(());
            }
        }
    }
    prop_assert!(values <= 4);
    Ok(())
}

#[test]
fn any_numbers_a_client_sends_are_answered_or_refused_by_name() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(serve_service(service_config()));
    // The sample graph, registered through a stream, for GetValues.
    let graph_id = runtime.block_on(async {
        let mut client = server.client().await;
        let chunk = proto::PutGraphRequest {
            chunk: Some(sample_graph()),
        };
        let response = client
            .put_graph(tokio_stream::iter(vec![chunk]))
            .await
            .unwrap()
            .into_inner();
        response.graph_id
    });
    let mut runner = TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    });
    let case = (
        start(),
        prop::collection::vec(query(), 0..8),
        (extreme_u32(), extreme_u32(), extreme_u32()),
    );
    runner
        .run(&case, |(start, queries, range)| {
            runtime.block_on(async {
                evaluate_batch(&server, start, queries).await?;
                get_values(&server, &graph_id, range).await
            })
        })
        .unwrap();
    // The server still answers as usual.
    runtime.block_on(async {
        let start = EvaluateStart {
            graph_source: Some(GraphSource::Graph(sample_graph())),
            ..Default::default()
        };
        let mut client = server.client().await;
        let request = EvaluateBatchRequest {
            start: Some(start),
            queries: vec![tokens(9, &[0])],
        };
        let mut stream = client.evaluate_batch(request).await.unwrap().into_inner();
        let mut verdicts = Vec::new();
        while let Some(message) = stream.message().await.unwrap() {
            verdicts.extend(message.verdicts);
        }
        assert_eq!(verdicts.len(), 1);
        assert_eq!(verdicts[0].error, None);
    });
}

/// `GetValues` pages fit `--max-message-bytes` whatever it is: with a limit of 1 KiB, the
/// values of a 250-vertex graph come in several small pages (the pages were cut at 1 MiB, and
/// such a stream ended with OUT_OF_RANGE, its summary lost).
#[tokio::test]
async fn value_pages_fit_a_small_message_limit() {
    let server = crate::support::server::serve(grundy::service::ServerConfig {
        max_message_bytes: 1024,
        ..crate::support::server::server_config()
    })
    .await;
    let n = 250u32;
    let graph = proto::Graph {
        vertex_count: n,
        out_degrees: (0..n).map(|v| u32::from(v + 1 < n)).collect(),
        targets: (1..n).collect(),
        ..Default::default()
    };
    let mut client = server.client().await;
    let registered = client
        .put_graph(tokio_stream::iter(vec![proto::PutGraphRequest {
            chunk: Some(graph),
        }]))
        .await
        .unwrap()
        .into_inner();
    let mut stream = client
        .get_values(GetValuesRequest {
            graph_id: registered.graph_id,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let summary = stream.message().await.unwrap().unwrap();
    assert!(summary.graph.is_some());
    let mut values = 0;
    let mut pages = 0;
    while let Some(page) = stream.message().await.expect("every page fits the limit") {
        values += page.values.len();
        pages += 1;
    }
    assert_eq!(values, n as usize);
    assert!(pages > 1, "{pages} pages");
}
