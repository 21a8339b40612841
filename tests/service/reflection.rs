//! Server reflection, both versions: v1alpha (what Python's `grpcio-reflection`, Postman and
//! evans speak) lists and describes `grundy.v1.GrundyService` like v1 does, and with a bearer
//! token configured both need it while health stays open. Driven by the clients generated in
//! tonic-reflection, over real gRPC on 127.0.0.1:0.

use crate::support::process::ServerProcess;
use crate::support::server::{PATIENCE, serve, server_config, service_config};
use prost::Message;
use prost_types::FileDescriptorProto;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
use tonic_reflection::pb::v1alpha::{
    ServerReflectionRequest, ServerReflectionResponse,
    server_reflection_client::ServerReflectionClient, server_reflection_request::MessageRequest,
    server_reflection_response::MessageResponse,
};

use grundy::service::ServerConfig;

const TOKEN: &str = "reflection-s3cret";
const GRUNDY_SERVER: &str = env!("CARGO_BIN_EXE_grundy-server");

/// A v1alpha reflection client that sends `authorization: Bearer <token>` when given one.
type Client = ServerReflectionClient<
    InterceptedService<Channel, Box<dyn FnMut(Request<()>) -> Result<Request<()>, Status> + Send>>,
>;

fn reflection_client(channel: Channel, token: Option<&'static str>) -> Client {
    let add_token = move |mut request: Request<()>| {
        if let Some(token) = token {
            let value = format!("Bearer {token}").parse().expect("ASCII token");
            request.metadata_mut().insert("authorization", value);
        }
        Ok(request)
    };
    ServerReflectionClient::with_interceptor(channel, Box::new(add_token) as Box<_>)
}

/// Sends `requests` on one reflection stream and returns the answers, one per request.
async fn ask(
    client: &mut Client,
    requests: Vec<MessageRequest>,
) -> Result<Vec<MessageResponse>, Status> {
    let count = requests.len();
    let requests = requests
        .into_iter()
        .map(|message_request| ServerReflectionRequest {
            host: String::new(),
            message_request: Some(message_request),
        });
    let mut stream = client
        .server_reflection_info(tokio_stream::iter(requests))
        .await?
        .into_inner();
    let mut answers = Vec::with_capacity(count);
    for _ in 0..count {
        let answer: Option<ServerReflectionResponse> =
            tokio::time::timeout(PATIENCE, stream.message())
                .await
                .expect("reflection answers in time")?;
        let answer = answer.expect("one answer per request");
        answers.push(answer.message_response.expect("an answer"));
    }
    Ok(answers)
}

#[tokio::test]
async fn v1alpha_lists_and_describes_the_grundy_service() {
    let server = serve(server_config()).await;
    let mut client = reflection_client(server.channel().await, None);
    let answers = ask(
        &mut client,
        vec![
            MessageRequest::ListServices(String::new()),
            MessageRequest::FileContainingSymbol("grundy.v1.GrundyService".into()),
        ],
    )
    .await
    .unwrap();

    let MessageResponse::ListServicesResponse(list) = &answers[0] else {
        panic!("expected a service list, got {:?}", answers[0]);
    };
    let names: Vec<&str> = list.service.iter().map(|s| s.name.as_str()).collect();
    for expected in [
        "grundy.v1.GrundyService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }

    let MessageResponse::FileDescriptorResponse(files) = &answers[1] else {
        panic!("expected file descriptors, got {:?}", answers[1]);
    };
    let files: Vec<FileDescriptorProto> = files
        .file_descriptor_proto
        .iter()
        .map(|bytes| FileDescriptorProto::decode(bytes.as_slice()).unwrap())
        .collect();
    let service = files
        .iter()
        .filter(|file| file.package() == "grundy.v1")
        .flat_map(|file| &file.service)
        .find(|service| service.name() == "GrundyService")
        .expect("the file of grundy.v1.GrundyService");
    let methods: Vec<(&str, &str)> = service
        .method
        .iter()
        .map(|m| (m.name(), m.output_type()))
        .collect();
    assert_eq!(
        methods,
        [
            ("Evaluate", ".grundy.v1.EvaluateResponse"),
            ("EvaluateBatch", ".grundy.v1.EvaluateBatchResponse"),
            ("PutGraph", ".grundy.v1.PutGraphResponse"),
            ("GetValues", ".grundy.v1.GetValuesResponse"),
        ]
    );
}

#[tokio::test]
async fn with_a_token_both_reflection_versions_need_it_and_health_does_not() {
    let server = serve(ServerConfig {
        service: service_config(),
        auth_token: Some(TOKEN.into()),
        ..ServerConfig::default()
    })
    .await;
    let channel = server.channel().await;

    let health = HealthClient::new(channel.clone())
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await;
    assert!(health.is_ok(), "health needs no token: {health:?}");

    for token in [None, Some("wrong-token")] {
        let mut client = reflection_client(channel.clone(), token);
        let status = ask(
            &mut client,
            vec![MessageRequest::ListServices(String::new())],
        )
        .await
        .unwrap_err();
        assert_eq!(status.code(), Code::Unauthenticated, "v1alpha, {token:?}");
    }
    {
        use tonic_reflection::pb::v1::{
            ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
        };
        let status = ServerReflectionClient::new(channel.clone())
            .server_reflection_info(tokio_stream::iter(Vec::<ServerReflectionRequest>::new()))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::Unauthenticated, "v1 without a token");
    }

    let mut client = reflection_client(channel, Some(TOKEN));
    let answers = ask(
        &mut client,
        vec![MessageRequest::ListServices(String::new())],
    )
    .await
    .unwrap();
    assert!(
        matches!(&answers[0], MessageResponse::ListServicesResponse(list)
            if list.service.iter().any(|s| s.name == "grundy.v1.GrundyService")),
        "{answers:?}"
    );
}

/// A client that asks for descriptors faster than it reads them, then leaves: the answers the
/// reflection service still had to send have nowhere to go, and its task ends quietly (the
/// tonic-reflection releases before 0.14.9 panicked there, on every such client).
#[tokio::test]
async fn a_client_leaving_a_reflection_stream_unread_panics_nothing() {
    /// Descriptor requests sent: their answers (some 30 KB each) fill the stream's flow
    /// control window many times over, so the service's task waits to send one.
    const ASKED: usize = 200;
    let server = ServerProcess::start(GRUNDY_SERVER, &[]);
    let channel = Channel::from_shared(server.url())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = reflection_client(channel.clone(), None);
    let (requests, received) = tokio::sync::mpsc::channel(ASKED);
    for _ in 0..ASKED {
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::FileContainingSymbol(
                "grundy.v1.GrundyService".into(),
            )),
        };
        requests.send(request).await.unwrap();
    }
    let mut stream = client
        .server_reflection_info(tokio_stream::wrappers::ReceiverStream::new(received))
        .await
        .unwrap()
        .into_inner();
    let first = tokio::time::timeout(PATIENCE, stream.message())
        .await
        .expect("reflection answers in time");
    assert!(matches!(first, Ok(Some(_))), "{first:?}");
    // The client leaves: its stream is reset with the rest of the answers unread.
    drop(stream);
    drop(requests);
    // Another call on the same connection comes after the reset, and is answered.
    let mut client = reflection_client(channel, None);
    ask(
        &mut client,
        vec![MessageRequest::ListServices(String::new())],
    )
    .await
    .unwrap();
    let log = server.stop();
    assert!(!log.contains("panicked"), "{log}");
}

/// An unknown symbol is quoted in a bounded excerpt, however long the client made it: the
/// reflection service's own message quotes it whole.
#[tokio::test]
async fn an_unknown_symbol_is_quoted_in_a_bounded_excerpt() {
    let server = serve(server_config()).await;
    let mut client = reflection_client(server.channel().await, None);
    let symbol = format!("grundy.v1.{}", "X".repeat(100_000));
    let status = ask(
        &mut client,
        vec![MessageRequest::FileContainingSymbol(symbol)],
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    let message = status.message();
    assert!(
        message.len() < 200,
        "{} bytes: {message:.300}",
        message.len()
    );
    assert!(message.starts_with("symbol \"grundy.v1.XXX"), "{message}");
    assert!(
        message.ends_with("... (100010 bytes) not found"),
        "{message}"
    );
}
