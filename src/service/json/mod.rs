//! JSON over HTTP on the gRPC port (gRPC-JSON transcoding): every RPC with a
//! `google.api.http` option in the proto is also served as JSON at that route, for callers
//! without generated stubs (curl, scripts). docs/api.md, "JSON over HTTP", is the contract.
//!
//! [`JsonFront`] sits in front of the gRPC services. A request whose content type is not
//! `application/grpc*` is its: it finds the route, checks the bearer token, reads the body
//! (bounded in bytes and time), makes it into the gRPC request of the route and calls the
//! service stack behind it in process, `authorization` and the deadline passed on. So auth,
//! admission, limits, deadlines, metrics and the error model are the gRPC calls' own; this
//! module only translates, in both directions, through the descriptors the binary embeds.
//!
//! - `routes`: the route table, from the descriptors' `google.api.http` options;
//! - `body`: the body read under its byte limit and the start timeout;
//! - `request`: the JSON body into gRPC frames; `parameters`: path variables and query
//!   parameters onto their fields, and the `timeout` parameter;
//! - `generated`: the `grundy.v1` messages read from and written as JSON by serde code that
//!   `build.rs` generates; `scalars`: the per-kind readers and writers it calls;
//! - `response`: gRPC frames and trailers into JSON (one object, NDJSON or an array);
//! - `status`: a status's HTTP status and its `google.rpc.Status` JSON body;
//! - `openapi`: the OpenAPI document of these routes, made from the descriptors;
//! - `picture`: `GET /v1/graphs/{graph_id}/picture.svg`, a position drawn (no RPC behind it).

mod body;
mod generated;
mod openapi;
mod parameters;
mod picture;
mod request;
mod response;
mod routes;
mod scalars;
mod status;

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{HeaderValue, Method, Request, Response, Version, header};
use prost_reflect::DescriptorPool;
use tonic::Status;
use tonic::body::Body;

use self::response::{NDJSON, StreamForm};
use self::routes::{Lookup, RouteTable};
pub(crate) use self::status::error_response;
use super::auth::BearerAuth;
use super::error::{Limit, ServiceError};
use super::front::{Front, Routed};
use super::rpc::protocol::Protocol;
use super::state::GameService;
use crate::proto;

/// The routes and what serving them needs, shared by every connection.
#[derive(Debug)]
struct Shared {
    pool: DescriptorPool,
    routes: RouteTable,
    auth: BearerAuth,
    service: GameService,
    body_limit: usize,
    start_timeout: Duration,
    /// The permits of the bodies being received and transcoded ([`body::MAX_JSON_BODIES`]).
    bodies: Arc<tokio::sync::Semaphore>,
    /// The OpenAPI document, made on its first request.
    openapi: std::sync::OnceLock<bytes::Bytes>,
}

/// Serves JSON over HTTP in front of the gRPC services (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct JsonFront {
    shared: Arc<Shared>,
}

impl JsonFront {
    /// The layer of a server with this service, token check, message limit and start
    /// timeout. Fails only when the embedded descriptors give no route table (a build bug).
    pub(crate) fn new(
        service: GameService,
        auth: BearerAuth,
        max_message_bytes: usize,
        start_timeout: Duration,
    ) -> Result<Self, String> {
        let pool = descriptors()?;
        let routes = RouteTable::from_pool(&pool).map_err(|e| e.to_string())?;
        tracing::debug!(routes = ?routes.describe(), "JSON over HTTP");
        let body_limit = body::json_body_limit(max_message_bytes);
        let shared = Shared {
            pool,
            routes,
            auth,
            service,
            body_limit,
            bodies: Arc::new(tokio::sync::Semaphore::new(body::MAX_JSON_BODIES)),
            start_timeout,
            openapi: std::sync::OnceLock::new(),
        };
        Ok(Self {
            shared: Arc::new(shared),
        })
    }

    /// The embedded descriptors (for other layers' JSON errors).
    pub(crate) fn pool(&self) -> &DescriptorPool {
        &self.shared.pool
    }
}

/// The descriptors the binary embeds. Fails only on a build bug.
pub(crate) fn descriptors() -> Result<DescriptorPool, String> {
    DescriptorPool::decode(proto::FILE_DESCRIPTOR_SET).map_err(|e| e.to_string())
}

impl<S> Front<S> for JsonFront
where
    S: tower::Service<Request<Body>, Response = Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    fn route(&self, request: Request<Body>, inner: &mut S) -> Routed {
        if is_grpc(&request) {
            return Routed::Pass(request);
        }
        // The ready stack goes to the transcoded call; its clone waits for its next poll_ready.
        let clone = inner.clone();
        let inner = std::mem::replace(inner, clone);
        Routed::Answer(Box::pin(serve(self.shared.clone(), inner, request)))
    }
}

/// True for a gRPC or gRPC-Web request, which passes through untouched.
fn is_grpc(request: &Request<Body>) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/grpc"))
}

/// The JSON answer of `request`: its route's RPC called through `inner`.
async fn serve<S>(shared: Arc<Shared>, mut inner: S, request: Request<Body>) -> Response<Body>
where
    S: tower::Service<Request<Body>, Response = Response<Body>> + Send,
    S::Future: Send,
{
    let pool = &shared.pool;
    let (parts, body) = request.into_parts();
    if let Some(graph_id) = picture::graph_of(parts.uri.path()) {
        return serve_picture(shared.clone(), &parts, graph_id).await;
    }
    if parts.uri.path() == openapi::PATH {
        return serve_openapi(&shared, &parts);
    }
    let (route, variables) = match shared.routes.lookup(&parts.method, parts.uri.path()) {
        Lookup::Found(route, variables) => (route, variables),
        Lookup::WrongMethod(allowed) => {
            let allowed: Vec<_> = allowed.iter().map(Method::as_str).collect();
            let allowed = allowed.join(", ");
            let error = ServiceError::MethodNotAllowed {
                path: parts.uri.path().chars().take(200).collect(),
                method: parts.method.to_string(),
                allowed: allowed.clone(),
            };
            let mut response = error_response(pool, &error.into());
            if let Ok(allow) = HeaderValue::from_str(&allowed) {
                response.headers_mut().insert(header::ALLOW, allow);
            }
            return response;
        }
        Lookup::NotFound => {
            let error = ServiceError::UnknownRoute {
                method: parts.method.to_string(),
                path: parts.uri.path().to_string(),
            };
            return error_response(pool, &error.into());
        }
    };
    // A request refused before its RPC is called is counted here, as the RPC's refusals are.
    let arrived = tokio::time::Instant::now();
    let (timeout, name) = (shared.start_timeout, rpc_name(&route.rpc));
    let refuse = |status: Status| {
        let service = &shared.service;
        service.count_refusal(name, Protocol::Json, &status, arrived);
        error_response(pool, &status)
    };
    // The token first: a caller without it gets no parsing done for it.
    let authorization = parts.headers.get(header::AUTHORIZATION);
    if let Err(error) = shared.auth.check(authorization.map(HeaderValue::as_bytes)) {
        shared.service.metrics().auth_failures.inc();
        return refuse(error.into());
    }
    if let Err(status) = body::check_declared_length(&parts.headers, shared.body_limit) {
        return refuse(status);
    }
    // The body holds its place from its first byte until the gRPC request is made of it.
    let Ok(receiving) = shared.bodies.clone().try_acquire_owned() else {
        let error = ServiceError::LimitExceeded {
            limit: Limit::JsonBodies,
            value: body::MAX_JSON_BODIES as u64,
            what: "a JSON request while as many bodies are being received".to_string(),
        };
        return refuse(error.into());
    };
    let stalled = move || ServiceError::RequestStalled(timeout).into();
    let bytes = match body::read_limited(body, shared.body_limit, timeout, stalled).await {
        Ok(bytes) => bytes,
        Err(status) => return refuse(status),
    };
    let transcoded = match request::transcode(route, &variables, parts.uri.query(), &bytes) {
        Ok(transcoded) => transcoded,
        Err(status) => return refuse(status),
    };
    drop(bytes);
    drop(receiving);
    let grpc = grpc_request(&parts, &route.grpc_path, transcoded);
    let form = route.server_streaming.then(|| stream_form(&parts.headers));
    let started = Instant::now();
    let answer = match tower::ServiceExt::oneshot(&mut inner, grpc).await {
        Ok(answer) => answer,
        Err(_) => {
            let status = Status::internal("the gRPC call failed in process");
            return error_response(pool, &status);
        }
    };
    let response = response::respond(pool.clone(), route.output.clone(), form, answer).await;
    tracing::debug!(rpc = %route.rpc, status = %response.status(), elapsed = ?started.elapsed(), "JSON request");
    response
}

/// The answer to a request on a picture's path: GET with the token, or its refusal.
async fn serve_picture(
    shared: Arc<Shared>,
    parts: &http::request::Parts,
    graph_id: &str,
) -> Response<Body> {
    if parts.method != Method::GET {
        let mut response = error_response(&shared.pool, &picture::wrong_method(&parts.method));
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET"));
        return response;
    }
    let authorization = parts.headers.get(header::AUTHORIZATION);
    if let Err(error) = shared.auth.check(authorization.map(HeaderValue::as_bytes)) {
        shared.service.metrics().auth_failures.inc();
        return error_response(&shared.pool, &error.into());
    }
    picture::serve(shared.clone(), parts, graph_id).await
}

/// The OpenAPI document (GET, with the token as every route).
fn serve_openapi(shared: &Shared, parts: &http::request::Parts) -> Response<Body> {
    let pool = &shared.pool;
    if parts.method != Method::GET {
        let error = ServiceError::MethodNotAllowed {
            path: openapi::PATH.to_string(),
            method: parts.method.to_string(),
            allowed: "GET".to_string(),
        };
        return error_response(pool, &error.into());
    }
    let authorization = parts.headers.get(header::AUTHORIZATION);
    if let Err(error) = shared.auth.check(authorization.map(HeaderValue::as_bytes)) {
        shared.service.metrics().auth_failures.inc();
        return error_response(pool, &error.into());
    }
    let text = shared
        .openapi
        .get_or_init(|| openapi::document_text(pool, &shared.routes).into());
    let mut response = Response::new(Body::new(http_body_util::Full::new(text.clone())));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The gRPC request of a transcoded JSON request: the route's path, HTTP/2 (as the gRPC
/// services and the gRPC-Web layer expect), the caller's `authorization`, trace context and
/// deadline, and the connection's extensions (peer address, TLS certificates), marked as
/// JSON for the metrics.
fn grpc_request(
    parts: &http::request::Parts,
    path: &str,
    transcoded: request::Transcoded,
) -> Request<Body> {
    let body = http_body_util::Full::new(transcoded.frames);
    let mut grpc = Request::new(Body::new(body));
    *grpc.method_mut() = Method::POST;
    *grpc.version_mut() = Version::HTTP_2;
    if let Ok(uri) = path.parse() {
        *grpc.uri_mut() = uri;
    }
    *grpc.extensions_mut() = parts.extensions.clone();
    grpc.extensions_mut().insert(Protocol::Json);
    let headers = grpc.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    headers.insert(header::TE, HeaderValue::from_static("trailers"));
    for name in ["authorization", "traceparent", "tracestate", "grpc-timeout"] {
        if let Some(value) = parts.headers.get(name) {
            headers.insert(name, value.clone());
        }
    }
    if let Some(timeout) = transcoded.timeout
        && let Ok(value) = HeaderValue::from_str(&grpc_timeout(timeout))
    {
        headers.insert("grpc-timeout", value);
    }
    grpc
}

/// A deadline as a `grpc-timeout` value (at most eight digits).
fn grpc_timeout(timeout: Duration) -> String {
    let millis = timeout.as_millis().max(1);
    if millis <= 99_999_999 {
        format!("{millis}m")
    } else {
        format!("{}S", timeout.as_secs().min(99_999_999))
    }
}

/// NDJSON when the caller's `Accept` names it, else one array.
fn stream_form(headers: &http::HeaderMap) -> StreamForm {
    let ndjson = headers
        .get_all(header::ACCEPT)
        .iter()
        .any(|value| value.to_str().is_ok_and(|accept| accept.contains(NDJSON)));
    if ndjson {
        StreamForm::Ndjson
    } else {
        StreamForm::Array
    }
}

/// The static name of an RPC, as the metrics label it.
fn rpc_name(rpc: &str) -> &'static str {
    match rpc {
        "EvaluateBatch" => "EvaluateBatch",
        "PutGraph" => "PutGraph",
        "GetValues" => "GetValues",
        _ => "Json",
    }
}
