//! The protocol of each RPC, specified at the service trait: `GrundyService` called directly
//! on a `GameService`, without a socket or a transport. A unary request is a
//! `Request::new(message)`; a request stream is a body of gRPC length-prefixed frames fed
//! through a channel, so that a test sends a message, reads the answer, then sends the next.
//! Each test names the rule it checks; a refusal is checked by its code and by the field its
//! message and its `BadRequest` detail name.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::StreamBody;
use hyper::body::Frame;
use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tonic::codec::Codec;
use tonic::{Code, Request, Response, Status, Streaming};
use tonic_prost::ProstCodec;
use tonic_types::StatusExt;

use crate::support::server::{
    PATIENCE, batch, batch_request, chunks, grpc_frame, next, next_ok, sample_graph,
    sample_outcome, service_config, start, start_id, tokens,
};
use grundy::proto::grundy_service_server::GrundyService;
use grundy::proto::{
    self, EvaluateBatchRequest, EvaluateRequest, EvaluateStart, GetValuesRequest, PutGraphRequest,
    Query, Sent, evaluate_request::Payload, evaluate_start::GraphSource,
};
use grundy::service::{GameService, ServiceConfig, game_from_proto, graph_id_sync};

/// A service of the tests' settings, serving, with an empty cache.
fn service() -> GameService {
    GameService::new(service_config())
}

/// The client's end of a request stream: each message goes as one frame of the body, and
/// dropping it ends the body (the client's half-close).
struct Sender(mpsc::UnboundedSender<Result<Frame<Bytes>, Infallible>>);

impl Sender {
    fn send(&self, message: &impl Message) {
        self.send_bytes(grpc_frame(0, &message.encode_to_vec()));
    }

    /// Sends `bytes` as they are: a frame of the body, whatever it holds.
    fn send_bytes(&self, bytes: Vec<u8>) {
        self.0
            .send(Ok(Frame::data(Bytes::from(bytes))))
            .expect("the request body is still read");
    }
}

/// A streaming request whose messages `Sender` sends, decoded by prost's codec (the server's
/// own is private to the crate, and reads the same bytes).
fn streaming<T: Message + Default + Send + 'static>() -> (Sender, Request<Streaming<T>>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let body = StreamBody::new(UnboundedReceiverStream::new(rx));
    let decoder = ProstCodec::<T, T>::default().decoder();
    let request = Request::new(Streaming::new_request(decoder, body, None, None));
    (Sender(tx), request)
}

/// A streaming request of `messages`, half-closed after them.
fn stream_of<T: Message + Default + Send + 'static>(messages: &[T]) -> Request<Streaming<T>> {
    let (sender, request) = streaming();
    for message in messages {
        sender.send(message);
    }
    request
}

/// A stream of `Sent` responses as a client reads it: the messages they encode.
fn messages<M: Message + Default>(
    response: Response<impl Stream<Item = Result<Sent<M>, Status>> + Unpin>,
) -> impl Stream<Item = Result<M, Status>> + Unpin {
    response
        .into_inner()
        .map(|item| item.map(|sent| sent.into_message().expect("a response that decodes")))
}

/// The rest of a response stream: its messages, then its end (OK) or its final status.
async fn rest<M>(
    stream: &mut (impl Stream<Item = Result<M, Status>> + Unpin),
) -> (Vec<M>, Result<(), Status>) {
    let mut messages = Vec::new();
    loop {
        let item = tokio::time::timeout(PATIENCE, stream.next())
            .await
            .expect("a response or the end in time");
        match item {
            None => return (messages, Ok(())),
            Some(Ok(message)) => messages.push(message),
            Some(Err(status)) => {
                let end = tokio::time::timeout(PATIENCE, stream.next()).await;
                assert!(matches!(end, Ok(None)), "nothing after the final status");
                return (messages, Err(status));
            }
        }
    }
}

/// The refusal of a call, which must not have answered.
fn refused<T>(result: Result<Response<T>, Status>) -> Status {
    match result {
        Ok(_) => panic!("the call was answered, not refused"),
        Err(status) => status,
    }
}

/// Checks an INVALID_ARGUMENT that names `field`: its one `BadRequest` violation is `field`,
/// and its message names the field (its last path segment at least).
fn assert_invalid(status: &Status, field: &str) {
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let details = status.get_error_details();
    let violations = &details
        .bad_request()
        .expect("a BadRequest")
        .field_violations;
    assert_eq!(violations.len(), 1, "{status:?}");
    assert_eq!(violations[0].field, field, "{status:?}");
    let leaf = field.rsplit('.').next().unwrap();
    assert!(status.message().contains(leaf), "{status:?}");
}

/// Checks a NOT_FOUND for the id `graph_id`: its message quotes the id and says how to
/// register it.
fn assert_unregistered(status: &Status, graph_id: &str) {
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    assert!(
        status.message().contains(&format!("{graph_id:?}")),
        "{status:?}"
    );
    assert!(status.message().contains("PutGraph"), "{status:?}");
}

/// The summary of the first response of a stream: the graph's, with no verdicts.
fn assert_summary(response: &proto::EvaluateResponse) -> &proto::GraphSummary {
    assert!(response.verdicts.is_empty(), "{response:?}");
    assert!(response.packed_verdicts.is_none(), "{response:?}");
    response
        .graph
        .as_ref()
        .expect("the first response carries the summary")
}

/// Query `id` of one token on vertex `id % 4` of [`sample_graph`].
fn sample_query(id: u64) -> Query {
    tokens(id, &[(id % 4) as u32])
}

/// Checks the verdicts of [`sample_query`] `ids`, in that order.
fn assert_sample_verdicts(verdicts: &[proto::Verdict], ids: &[u64]) {
    let got: Vec<_> = verdicts.iter().map(|v| (v.query_id, v.outcome)).collect();
    let expected: Vec<_> = ids
        .iter()
        .map(|&id| (id, sample_outcome((id % 4) as u32)))
        .collect();
    assert_eq!(got, expected);
}

/// `start` with no graph source at all.
fn start_without_source() -> EvaluateStart {
    EvaluateStart {
        graph_source: None,
        explain: false,
        analysis: None,
        play_convention: 0,
    }
}

// Evaluate.

#[tokio::test]
async fn evaluate_refuses_a_stream_whose_first_message_carries_queries() {
    let request = stream_of(&[batch(vec![sample_query(1)]), start(sample_graph())]);
    let status = refused(service().evaluate(request).await);
    assert_invalid(&status, "start");
    assert!(status.message().contains("not `queries`"), "{status:?}");
}

#[tokio::test]
async fn evaluate_refuses_a_stream_that_opens_without_start() {
    // No message at all: the client half-closed at once.
    let status = refused(service().evaluate(stream_of::<EvaluateRequest>(&[])).await);
    assert_invalid(&status, "start");
    // A first message with neither `start` nor `queries`.
    let request = stream_of(&[EvaluateRequest { payload: None }]);
    let status = refused(service().evaluate(request).await);
    assert_invalid(&status, "start");
}

#[tokio::test]
async fn evaluate_refuses_start_without_a_graph_source() {
    let no_source = EvaluateRequest {
        payload: Some(Payload::Start(start_without_source())),
    };
    let status = refused(service().evaluate(stream_of(&[no_source])).await);
    assert_invalid(&status, "start.graph_source");
}

#[tokio::test]
async fn evaluate_on_an_unregistered_graph_id_is_not_found() {
    let graph_id = "0".repeat(64);
    let status = refused(service().evaluate(stream_of(&[start_id(&graph_id)])).await);
    assert_unregistered(&status, &graph_id);
}

#[tokio::test]
async fn evaluate_refuses_request_bytes_that_do_not_decode() {
    let (sender, request) = streaming::<EvaluateRequest>();
    // Field 1 (`start`) announced 5 bytes long, with one.
    sender.send_bytes(grpc_frame(0, &[0x0a, 0x05, 0x00]));
    let status = refused(service().evaluate(request).await);
    assert_invalid(&status, "request");
}

#[tokio::test]
async fn evaluate_answers_the_summary_then_each_batch_in_query_order() {
    let request = stream_of(&[
        start(sample_graph()),
        batch((0..6).map(sample_query).collect()),
        batch(vec![sample_query(9), sample_query(7), sample_query(8)]),
    ]);
    let mut responses = messages(service().evaluate(request).await.unwrap());
    let (messages, end) = rest(&mut responses).await;
    end.unwrap();
    assert_eq!(
        messages.len(),
        3,
        "the summary, then one response per batch"
    );
    let summary = assert_summary(&messages[0]);
    assert_eq!((summary.vertex_count, summary.edge_count), (4, 3));
    assert_sample_verdicts(&messages[1].verdicts, &[0, 1, 2, 3, 4, 5]);
    assert_sample_verdicts(&messages[2].verdicts, &[9, 7, 8]);
}

#[tokio::test]
async fn evaluate_ends_a_stream_closed_after_start_with_the_summary_then_ok() {
    let request = stream_of(&[start(sample_graph())]);
    let mut responses = messages(service().evaluate(request).await.unwrap());
    let (messages, end) = rest(&mut responses).await;
    end.unwrap();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_summary(&messages[0]);
}

#[tokio::test]
async fn evaluate_answers_an_empty_batch_with_an_empty_response() {
    // One response per batch, as the contract says: none of an empty batch's verdicts.
    let request = stream_of(&[
        start(sample_graph()),
        batch(vec![]),
        batch(vec![sample_query(5)]),
    ]);
    let mut responses = messages(service().evaluate(request).await.unwrap());
    let (messages, end) = rest(&mut responses).await;
    end.unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_summary(&messages[0]);
    assert_eq!(messages[1], proto::EvaluateResponse::default());
    assert_sample_verdicts(&messages[2].verdicts, &[5]);
}

#[tokio::test]
async fn evaluate_ends_the_stream_at_a_second_start_after_the_answers_before_it() {
    let (sender, request) = streaming();
    sender.send(&start(sample_graph()));
    let mut responses = messages(service().evaluate(request).await.unwrap());
    assert_summary(&next_ok(&mut responses).await);
    sender.send(&batch(vec![sample_query(1)]));
    assert_sample_verdicts(&next_ok(&mut responses).await.verdicts, &[1]);
    sender.send(&start(sample_graph()));
    let (messages, end) = rest(&mut responses).await;
    assert!(messages.is_empty(), "{messages:?}");
    let status = end.unwrap_err();
    assert_invalid(&status, "start");
    assert!(status.message().contains("only be sent once"), "{status:?}");
}

#[tokio::test]
async fn evaluate_ends_the_stream_at_a_later_message_without_a_payload() {
    let (sender, request) = streaming();
    sender.send(&start(sample_graph()));
    let mut responses = messages(service().evaluate(request).await.unwrap());
    assert_summary(&next_ok(&mut responses).await);
    sender.send(&EvaluateRequest { payload: None });
    let status = next(&mut responses).await.unwrap_err();
    // The message names the oneof's two fields, the BadRequest the oneof.
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let details = status.get_error_details();
    assert_eq!(
        details.bad_request().unwrap().field_violations[0].field,
        "payload"
    );
    assert!(
        status.message().contains("neither `start` nor `queries`"),
        "{status:?}"
    );
}

#[tokio::test]
async fn evaluate_answers_a_malformed_query_in_band_and_the_stream_goes_on() {
    let (sender, request) = streaming();
    sender.send(&start(sample_graph()));
    let mut responses = messages(service().evaluate(request).await.unwrap());
    assert_summary(&next_ok(&mut responses).await);
    sender.send(&batch(vec![
        sample_query(1),
        tokens(2, &[0, 9]),
        sample_query(3),
    ]));
    let verdicts = next_ok(&mut responses).await.verdicts;
    assert_sample_verdicts(&[verdicts[0].clone(), verdicts[2].clone()], &[1, 3]);
    assert_eq!(verdicts[1].query_id, 2);
    assert_eq!(verdicts[1].outcome(), proto::Outcome::Unspecified);
    let error = verdicts[1].error.as_ref().expect("the bad query's error");
    assert_eq!(error.field, "tokens.vertices[1]");
    assert!(error.message.contains("vertex 9"), "{error:?}");
    // The stream goes on: the next batch is answered, and the half-close ends it with OK.
    sender.send(&batch(vec![sample_query(4)]));
    assert_sample_verdicts(&next_ok(&mut responses).await.verdicts, &[4]);
    drop(sender);
    let (messages, end) = rest(&mut responses).await;
    assert!(messages.is_empty(), "{messages:?}");
    end.unwrap();
}

// EvaluateBatch.

#[tokio::test]
async fn evaluate_batch_refuses_a_request_without_start() {
    let request = EvaluateBatchRequest {
        start: None,
        queries: vec![sample_query(1)],
    };
    let status = refused(service().evaluate_batch(Request::new(request)).await);
    assert_invalid(&status, "start");
}

#[tokio::test]
async fn evaluate_batch_refuses_start_without_a_graph_source() {
    let request = EvaluateBatchRequest {
        start: Some(start_without_source()),
        queries: vec![sample_query(1)],
    };
    let status = refused(service().evaluate_batch(Request::new(request)).await);
    assert_invalid(&status, "start.graph_source");
}

#[tokio::test]
async fn evaluate_batch_without_queries_answers_the_summary_alone() {
    let request = batch_request(GraphSource::Graph(sample_graph()), vec![]);
    let answer = service().evaluate_batch(Request::new(request)).await;
    let (messages, end) = rest(&mut messages(answer.unwrap())).await;
    end.unwrap();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let summary = messages[0].graph.as_ref().expect("the summary");
    assert_eq!(summary.vertex_count, 4);
    assert!(messages[0].verdicts.is_empty());
}

#[tokio::test]
async fn evaluate_batch_answers_in_order_in_batches_of_the_configured_size() {
    let service = GameService::new(ServiceConfig {
        batch_response_size: 2,
        ..service_config()
    });
    let queries = (10..15).map(sample_query).collect();
    let request = batch_request(GraphSource::Graph(sample_graph()), queries);
    let answer = service.evaluate_batch(Request::new(request)).await;
    let (messages, end) = rest(&mut messages(answer.unwrap())).await;
    end.unwrap();
    assert!(messages[0].graph.is_some() && messages[0].verdicts.is_empty());
    let sizes: Vec<_> = messages[1..].iter().map(|m| m.verdicts.len()).collect();
    assert_eq!(sizes, [2, 2, 1]);
    let verdicts: Vec<_> = messages[1..]
        .iter()
        .flat_map(|m| m.verdicts.clone())
        .collect();
    assert_sample_verdicts(&verdicts, &[10, 11, 12, 13, 14]);
}

// GetValues.

#[tokio::test]
async fn get_values_of_an_unregistered_or_malformed_id_is_not_found() {
    let service = service();
    // A well-formed id never registered, and ids that are no SHA-256 at all.
    for graph_id in ["0".repeat(64), "not-an-id".into(), String::new()] {
        let request = GetValuesRequest {
            graph_id: graph_id.clone(),
            ..Default::default()
        };
        let status = refused(service.get_values(Request::new(request)).await);
        assert_unregistered(&status, &graph_id);
    }
}

#[tokio::test]
async fn get_values_clips_its_range_to_the_graph_and_answers_past_it_with_the_summary_alone() {
    let service = service();
    let graph_id = service
        .put_graph(stream_of(&chunks(&sample_graph(), 2)))
        .await
        .unwrap()
        .into_inner()
        .graph_id;
    let values = |first_vertex, vertex_limit| GetValuesRequest {
        graph_id: graph_id.clone(),
        first_vertex,
        vertex_limit,
        page_size: 1,
        summary_only: false,
        play_convention: 0,
    };
    // From vertex 2, at most 10: vertices 2 and 3, a page each.
    let answer = service.get_values(Request::new(values(2, 10))).await;
    let (messages, end) = rest(&mut answer.unwrap().into_inner()).await;
    end.unwrap();
    assert_eq!(messages[0].graph.as_ref().unwrap().graph_id, graph_id);
    let pages: Vec<_> = messages[1..]
        .iter()
        .map(|page| (page.first_vertex, page.values.len()))
        .collect();
    assert_eq!(pages, [(2, 1), (3, 1)]);
    // From vertex 4 (past the last) or 1000: the summary, no page, and OK.
    for first_vertex in [4, 1000] {
        let answer = service
            .get_values(Request::new(values(first_vertex, 0)))
            .await;
        let (messages, end) = rest(&mut answer.unwrap().into_inner()).await;
        end.unwrap();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(messages[0].graph.is_some() && messages[0].values.is_empty());
    }
}

// PutGraph.

#[tokio::test]
async fn put_graph_refuses_an_upload_without_chunks() {
    let status = refused(service().put_graph(stream_of::<PutGraphRequest>(&[])).await);
    assert_invalid(&status, "chunk");
}

#[tokio::test]
async fn put_graph_refuses_a_first_chunk_without_vertex_count() {
    let mut headless = chunks(&sample_graph(), 2);
    headless[0].chunk.as_mut().unwrap().vertex_count = 0;
    let status = refused(service().put_graph(stream_of(&headless)).await);
    assert_invalid(&status, "chunk.vertex_count");
    // A message without a chunk is an empty chunk: as a first one, it sets no vertex count.
    let status = refused(
        service()
            .put_graph(stream_of(&[PutGraphRequest { chunk: None }]))
            .await,
    );
    assert_invalid(&status, "chunk.vertex_count");
}

#[tokio::test]
async fn put_graph_refuses_a_later_chunk_with_another_vertex_count() {
    let service = service();
    // A later chunk may repeat the first one's vertex count...
    let mut repeated = chunks(&sample_graph(), 2);
    repeated[1].chunk.as_mut().unwrap().vertex_count = 4;
    service.put_graph(stream_of(&repeated)).await.unwrap();
    // ... but not change it.
    let mut changed = chunks(&sample_graph(), 2);
    changed[1].chunk.as_mut().unwrap().vertex_count = 5;
    let status = refused(service.put_graph(stream_of(&changed)).await);
    assert_invalid(&status, "chunk.vertex_count");
    assert!(status.message().starts_with("chunk 1:"), "{status:?}");
}

#[tokio::test]
async fn put_graph_refuses_chunks_with_more_entries_than_vertices() {
    for field in ["out_degrees", "split_counts"] {
        let graph = proto::Graph {
            split_counts: vec![1; 4],
            ..sample_graph()
        };
        let mut requests = chunks(&graph, 2);
        let last = requests.last_mut().unwrap().chunk.as_mut().unwrap();
        match field {
            "out_degrees" => last.out_degrees.push(0),
            _ => last.split_counts.push(1),
        }
        let status = refused(service().put_graph(stream_of(&requests)).await);
        assert_invalid(&status, &format!("chunk.{field}"));
        assert!(
            status.message().contains("more than vertex_count 4"),
            "{status:?}"
        );
    }
}

#[tokio::test]
async fn put_graph_registers_the_graph_under_the_id_that_evaluate_batch_then_accepts() {
    let service = service();
    let graph = sample_graph();
    let expected_id = graph_id_sync(&game_from_proto(graph.clone()).unwrap());
    let first = service
        .put_graph(stream_of(&chunks(&graph, 1)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.graph_id, expected_id);
    assert_eq!(first.graph.as_ref().unwrap().graph_id, expected_id);
    assert!(!first.already_registered);
    // The same graph in other chunks: the same id, already registered.
    let again = service
        .put_graph(stream_of(&chunks(&graph, 3)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again.graph_id, expected_id);
    assert!(again.already_registered);
    // EvaluateBatch by id answers as on the graph itself.
    let request = batch_request(
        GraphSource::GraphId(expected_id.clone()),
        vec![sample_query(0), sample_query(1)],
    );
    let answer = service.evaluate_batch(Request::new(request)).await;
    let (messages, end) = rest(&mut messages(answer.unwrap())).await;
    end.unwrap();
    assert_eq!(messages[0].graph.as_ref().unwrap().graph_id, expected_id);
    assert_sample_verdicts(&messages[1].verdicts, &[0, 1]);
}
