//! Serving `grundy.v1` on a listener until a shutdown future resolves, with the standard
//! endpoints around it: `grpc.health.v1` health, server reflection (v1, and v1alpha for the
//! clients that only speak it: Python's `grpcio-reflection`, Postman, evans), gzip/zstd
//! compression, optional bearer-token auth and TLS (mutual TLS with a client CA). Used by the
//! `grundy-server` binary, by the CLI's embedded server and by the tests.
//!
//! Shutdown drains: when `shutdown` resolves, health turns NOT_SERVING and new streams are
//! refused with UNAVAILABLE while the listener stays open (so probes see it); streams in
//! progress get up to `drain_timeout` to finish, then the rest are cancelled with UNAVAILABLE
//! "server shutting down", and the server closes its connections and returns.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use http_body_util::BodyExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_stream::Stream;
use tonic::codec::CompressionEncoding;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::server::{Connected, TcpIncoming};
use tonic::transport::{Certificate, Identity, ServerTlsConfig};
use tonic::{Code, Status};
use tonic_health::ServingStatus;
use tonic_reflection::server::{v1, v1alpha};
use tower::util::{MapRequestLayer, MapResponseLayer, option_layer};

use super::auth::BearerAuth;
use super::bounded_status::bound_status_messages;
use super::config::ServerConfig;
use super::error::request_stream_status;
use super::rpc::activity::{BodyActivity, StallTimeout};
use super::rpc::deadline::stamp_arrival;
use super::rpc::departure::ClientLeft;
use super::rpc::protocol::{Protocol, mark_grpc_web};
use super::state::GameService;
use crate::proto::{self, grundy_service_server::GrundyServiceServer};
use crate::service::front::{Front, FrontLayer, Routed};
use crate::service::json::{self, JsonFront};
use crate::service::rate_limit::RateLimitFront;
use crate::service::web::WebFront;

/// How long cancelled streams get to deliver their final status, and connections to close,
/// once the drain is over.
const CLOSE_GRACE: Duration = Duration::from_secs(3);

/// HTTP/2 flow-control window of one stream: what a client may send ahead of the server's
/// reading (hyper's default).
const STREAM_WINDOW_BYTES: u32 = 1 << 20;
/// HTTP/2 flow-control window of a connection. h2 gives a connection a budget for small DATA
/// frames buffered unread of half this window, charging each frame under 256 bytes the
/// difference, and answers a client over it with GOAWAY ENHANCE_YOUR_CALM. A stream window of
/// one-query messages (about 12 bytes each) charges about 21 MiB; at hyper's default 1 MiB
/// connection window (a 512 KiB budget) a client sending one query per message was cut off
/// after a few thousand, while the server was still resolving the graph. 64 MiB gives a
/// 32 MiB budget: more than any one stream's window can charge.
const CONNECTION_WINDOW_BYTES: u32 = 64 << 20;
/// The largest HTTP/2 frame the server takes (`SETTINGS_MAX_FRAME_SIZE`; 16 KiB unless set).
/// A 4 MiB `PutGraph` chunk otherwise comes as 256 DATA frames, each a step of the transport
/// and of the message decoder: in the good rounds of a 10^8-edge upload, 0.85-1.0 s besides
/// the analysis in 16 KiB frames, 0.6-0.75 s in frames of 256 KiB, 1 MiB or 4 MiB alike. The
/// smallest of those, because a header block is not flow-controlled: HEADERS and up to five
/// CONTINUATION frames (h2's bound for hyper's 16 KiB header lists) of an unfinished block
/// can hold 1.5 MiB of a connection's memory, before any auth check runs.
const MAX_FRAME_BYTES: u32 = 256 << 10;

/// The gRPC service name of `grundy.v1.GrundyService`, as health checks name it.
pub const SERVICE_NAME: &str = "grundy.v1.GrundyService";

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Serving failed (TLS setup, the listener).
    #[error("{0}")]
    Transport(#[from] tonic::transport::Error),
    /// The reflection service could not be built from the descriptors.
    #[error("cannot build the reflection service: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// The JSON routes could not be read from the descriptors.
    #[error("cannot build the JSON routes: {0}")]
    Json(String),
}

/// Serves until `shutdown` resolves, then drains (see the module documentation).
pub async fn run(
    listener: TcpListener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    let service = GameService::new(config.service.clone());
    run_service(listener, service, &config, shutdown).await
}

/// Like [`run`] with a service state the caller keeps a handle to (tests inspect it; the
/// binary serves its metrics).
pub async fn run_service(
    listener: TcpListener,
    service: GameService,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    serve_connections(incoming, service, config, shutdown).await
}

/// Like [`run_service`] on connections of any kind: `incoming` yields each new connection
/// (a socket, or one end of an in-memory pipe: the CLI's embedded server takes its
/// connections that way, HTTP/2 and gRPC unchanged, without the kernel between).
pub async fn serve_connections<I, IO, IE>(
    incoming: I,
    service: GameService,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError>
where
    I: Stream<Item = Result<IO, IE>> + Send,
    IO: AsyncRead + AsyncWrite + Connected + Unpin + Send + 'static,
    IO::ConnectInfo: Clone + Send + Sync + 'static,
    IE: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_service_status(SERVICE_NAME, ServingStatus::Serving)
        .await;
    let (reflection_v1, reflection_v1alpha) = match config.reflection {
        true => {
            let (v1, v1alpha) = reflection_services()?;
            (Some(v1), Some(v1alpha))
        }
        false => (None, None),
    };
    let auth = BearerAuth::new(config.auth_token.as_deref(), service.metrics().clone());
    let grundy = GrundyServiceServer::new(
        service
            .clone()
            .with_max_message_bytes(config.max_message_bytes),
    )
    .max_decoding_message_size(config.max_message_bytes)
    .max_encoding_message_size(config.max_message_bytes)
    .accept_compressed(CompressionEncoding::Gzip)
    .accept_compressed(CompressionEncoding::Zstd)
    .send_compressed(CompressionEncoding::Gzip)
    .send_compressed(CompressionEncoding::Zstd);

    let builder = transport(config)?;
    let remap: fn(http::Response<tonic::body::Body>) -> http::Response<tonic::body::Body> =
        remap_request_status;
    let bound: fn(http::Response<tonic::body::Body>) -> http::Response<tonic::body::Body> =
        bound_status_messages;
    let stamp: fn(http::Request<tonic::body::Body>) -> http::Request<tonic::body::Body> =
        stamp_arrival;
    let watch: fn(http::Request<tonic::body::Body>) -> http::Request<tonic::body::Body> =
        watch_request_body;
    let mark_web: fn(http::Request<tonic::body::Body>) -> http::Request<tonic::body::Body> =
        mark_grpc_web;
    let web = config.web.as_ref();
    let start_timeout = config.service.start_timeout;
    let json = config
        .json
        .then(|| {
            JsonFront::new(
                service.clone(),
                auth.clone(),
                config.max_message_bytes,
                start_timeout,
            )
        })
        .transpose()
        .map_err(ServerError::Json)?;
    let rate_limit = match config.rate_limit {
        Some(rate) => {
            let pool = match &json {
                Some(json) => json.pool().clone(),
                None => json::descriptors().map_err(ServerError::Json)?,
            };
            let metrics = service.metrics().clone();
            Some(RateLimitFront::new(rate, auth.clone(), pool, metrics))
        }
        None => None,
    };
    let router = builder
        // JSON over HTTP (and gRPC-Web with --web) come over HTTP/1.1 too.
        .accept_http1(true)
        // --rate-limit first: a request over it is refused before anything of it is read.
        .layer(option_layer(rate_limit.map(FrontLayer)))
        // The playground's files and render route first, then JSON over HTTP (called in
        // process through every layer below), then gRPC-Web translation.
        .layer(option_layer(web.map(|web| {
            FrontLayer(WebFront::new(
                web,
                auth.clone(),
                service.pool.clone(),
                start_timeout,
            ))
        })))
        .layer(option_layer(json.map(FrontLayer)))
        // gRPC-Web is marked as such for the metrics while its content type still tells.
        .layer(MapRequestLayer::new(mark_web))
        .layer(option_layer(web.map(|_| tonic_web::GrpcWebLayer::new())))
        .layer(MapResponseLayer::new(remap))
        // Client text that reflection quotes whole in a status is cut to an excerpt.
        .layer(MapResponseLayer::new(bound))
        // Before tonic's grpc-timeout timer starts, so that deadlines end as DEADLINE_EXCEEDED.
        .layer(MapRequestLayer::new(stamp))
        // A request body that fails marks its RPC as left by the client (CANCELLED); each of
        // its frames restarts its stream's start and idle timeouts.
        .layer(MapRequestLayer::new(watch))
        // A unary request takes its stream slot from its first byte, and its message, read
        // whole before the handler runs, is ended by the start timeout when it stalls.
        .layer(FrontLayer(UnaryAdmission {
            service: service.clone(),
            start_timeout: config.service.start_timeout,
        }))
        // Health stays open for probes; everything else, reflection included, needs the token
        // when one is set (reflection describes the API to whoever may call it, and to no one
        // else: docs/operating.md).
        .add_service(health_service)
        .add_service(InterceptedService::new(grundy, auth.clone()))
        .add_optional_service(reflection_v1.map(|v1| InterceptedService::new(v1, auth.clone())))
        .add_optional_service(
            reflection_v1alpha.map(|v1alpha| InterceptedService::new(v1alpha, auth)),
        );

    let (stop_serving, stopped) = oneshot::channel::<()>();
    let server = router.serve_with_incoming_shutdown(incoming, async {
        let _ = stopped.await;
    });
    tokio::pin!(server);
    tokio::select! {
        result = &mut server => return result.map_err(ServerError::from),
        () = shutdown => {}
    }

    drain(&service, &health, config, server, stop_serving).await
}

/// Watches a request's body (a layer of the router), with the RPC reading both from the
/// extensions: each frame it brings notes the time in its [`BodyActivity`], and an error
/// (the client reset the stream or closed its connection) sets its [`ClientLeft`]. One
/// wrapper for both, the body boxed once.
fn watch_request_body(
    mut request: http::Request<tonic::body::Body>,
) -> http::Request<tonic::body::Body> {
    let activity = BodyActivity::new();
    let left = ClientLeft::default();
    request.extensions_mut().insert(activity.clone());
    request.extensions_mut().insert(left.clone());
    request.map(|body| {
        let watched = body
            .map_frame(move |frame| {
                activity.touch();
                frame
            })
            .map_err(move |error| {
                left.mark();
                error
            });
        tonic::body::Body::new(watched)
    })
}

/// The methods of `grundy.v1.GrundyService` whose request is one message, by path: tonic
/// reads it whole before their handler runs, so the handler's guard cannot watch it arrive.
const UNARY_METHODS: [(&str, &str); 2] = [
    ("/grundy.v1.GrundyService/EvaluateBatch", "EvaluateBatch"),
    ("/grundy.v1.GrundyService/GetValues", "GetValues"),
];

/// Admits the unary RPCs of the service from the first byte of their request (a layer of
/// the router, inside the watch of request bodies): each takes its slot of
/// `--max-concurrent-streams` as it arrives (refused, as a stream is, when none is free), and
/// its message, which tonic reads whole before the handler runs, is ended with
/// DEADLINE_EXCEEDED once it brings nothing for `--start-timeout`, giving the slot back. A
/// message sent but for its last bytes used to hold its memory, and no slot, forever.
#[derive(Debug, Clone)]
struct UnaryAdmission {
    service: GameService,
    start_timeout: Duration,
}

impl<S> Front<S> for UnaryAdmission {
    fn route(&self, mut request: http::Request<tonic::body::Body>, _: &mut S) -> Routed {
        let path = request.uri().path();
        let Some(&(_, name)) = UNARY_METHODS.iter().find(|(method, _)| *method == path) else {
            return Routed::Pass(request);
        };
        let protocol = Protocol::of(request.extensions());
        let admission = match self.service.admit(name, protocol) {
            Ok(admission) => admission,
            Err(status) => return Routed::ready(status.into_http()),
        };
        request.extensions_mut().insert(admission);
        let (service, timeout) = (self.service.clone(), self.start_timeout);
        let arrived = Instant::now();
        Routed::Pass(request.map(|body| {
            let stalled = move || service.stalled(name, protocol, timeout, arrived);
            tonic::body::Body::new(StallTimeout::new(body, timeout, stalled))
        }))
    }
}

/// The reflection services, v1 and v1alpha. Each version describes every service the server
/// has (a builder describes only its own by default), so that a client of either lists them
/// all.
fn reflection_services() -> Result<
    (
        v1::ServerReflectionServer<impl v1::ServerReflection>,
        v1alpha::ServerReflectionServer<impl v1alpha::ServerReflection>,
    ),
    ServerError,
> {
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .include_reflection_service(false)
            .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(
                tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
            )
    };
    Ok((reflection().build_v1()?, reflection().build_v1alpha()?))
}

/// A tonic server builder with `grundy-server`'s HTTP/2 flow-control windows and frame size
/// (its keepalives, connection ages and TLS come from the configuration, in `transport`).
/// The service bench serves its no-op floor with them too.
pub fn http2_transport() -> tonic::transport::Server {
    tonic::transport::Server::builder()
        .initial_stream_window_size(STREAM_WINDOW_BYTES)
        .initial_connection_window_size(CONNECTION_WINDOW_BYTES)
        .max_frame_size(MAX_FRAME_BYTES)
}

/// The HTTP/2 transport: flow-control windows and frame size, keepalives, connection ages,
/// TLS.
fn transport(config: &ServerConfig) -> Result<tonic::transport::Server, ServerError> {
    let connections = config.connections;
    let mut builder = http2_transport()
        .http2_keepalive_interval(connections.keepalive_interval)
        .http2_keepalive_timeout(Some(connections.keepalive_timeout));
    if let Some(age) = connections.max_age {
        builder = builder.max_connection_age(age);
    }
    if let Some(grace) = connections.max_age_grace {
        builder = builder.max_connection_age_grace(grace);
    }
    if let Some(tls) = &config.tls {
        let mut tls_config =
            ServerTlsConfig::new().identity(Identity::from_pem(&tls.cert_pem, &tls.key_pem));
        if let Some(client_ca) = &tls.client_ca_pem {
            tls_config = tls_config.client_ca_root(Certificate::from_pem(client_ca));
        }
        builder = builder.tls_config(tls_config)?;
    }
    Ok(builder)
}

/// After the shutdown signal: NOT_SERVING, refuse new streams, wait for the running ones up
/// to the drain timeout, cancel what is left, then stop the server.
async fn drain(
    service: &GameService,
    health: &tonic_health::server::HealthReporter,
    config: &ServerConfig,
    mut server: Pin<&mut impl Future<Output = Result<(), tonic::transport::Error>>>,
    stop_serving: oneshot::Sender<()>,
) -> Result<(), ServerError> {
    tracing::info!(
        streams = service.active_streams(),
        drain_timeout = ?config.drain_timeout,
        "shutting down: NOT_SERVING, refusing new streams, draining"
    );
    health
        .set_service_status("", ServingStatus::NotServing)
        .await;
    health
        .set_service_status(SERVICE_NAME, ServingStatus::NotServing)
        .await;
    service.begin_drain();
    let drained = tokio::select! {
        () = service.wait_idle() => true,
        () = tokio::time::sleep(config.drain_timeout) => false,
        result = server.as_mut() => return result.map_err(ServerError::from),
    };
    if !drained {
        tracing::warn!(
            streams = service.active_streams(),
            "drain timeout: cancelling the remaining streams"
        );
        service.cancel_streams();
        if tokio::time::timeout(CLOSE_GRACE, service.wait_idle())
            .await
            .is_err()
        {
            tracing::warn!(
                streams = service.active_streams(),
                "streams still running after cancellation"
            );
        }
    }
    let _ = stop_serving.send(());
    match tokio::time::timeout(CLOSE_GRACE, server.as_mut()).await {
        Ok(result) => result?,
        // Health watches and idle clients may hold connections open: stop waiting for them.
        Err(_) => tracing::info!("connections still open after the grace period; closing"),
    }
    tracing::info!("server stopped");
    Ok(())
}

/// tonic refuses a unary request before its handler runs when the message is over
/// `max_message_bytes` (OUT_OF_RANGE) or does not decode (INTERNAL); the API promises
/// RESOURCE_EXHAUSTED naming the limit and INVALID_ARGUMENT, so the trailers-only response
/// is rewritten here, as the service rewrites streamed requests' (see
/// [`super::error::request_stream_status`], which both use).
fn remap_request_status(
    mut response: http::Response<tonic::body::Body>,
) -> http::Response<tonic::body::Body> {
    let is_candidate = response
        .headers()
        .get(Status::GRPC_STATUS)
        .map(|code| Code::from_bytes(code.as_bytes()))
        .is_some_and(|code| matches!(code, Code::OutOfRange | Code::Internal));
    if !is_candidate {
        return response;
    }
    let Some(status) = Status::from_header_map(response.headers()) else {
        return response;
    };
    let code = status.code();
    let remapped = request_stream_status(status);
    if remapped.code() == code {
        return response;
    }
    // The message came from tonic and is printable, so the headers always encode; this
    // writes the details (grpc-status-details-bin) too.
    let _ = remapped.add_header(response.headers_mut());
    response
}
