//! `GET /v1/graphs/{graph_id}/picture.svg`: a position of a registered graph drawn, so that
//! a chat message, a notebook or a page shows it with one link. Query parameters:
//! `tokens=0,2` (the position; absent: the graph and its values alone), `format=svg|dot`
//! (`dot`: Graphviz DOT), `convention=misere` (misère play: the vertices labelled by the
//! outcome and remoteness of one token), `label=...` (the caption's first words, `graph` by default; with
//! `label=test case 1 (line 1)` the picture is the one `grundy render` prints for the
//! first test case of a file).
//!
//! The route is an RPC of its own for the bookkeeping (`GetPicture`: a stream slot, the
//! deadline, the metrics labelled `json`), and its errors are the JSON API's
//! (`google.rpc.Status`). The verdict comes from the evaluator `EvaluateBatch` uses, with
//! `explain`; the evaluation and the drawing run on the work pool behind a render permit,
//! bounded by the drawing's size limits ([`MAX_SVG_VERTICES`] for SVG, [`MAX_DOT_EDGES`]
//! for DOT).

use std::sync::Arc;

use form_urlencoded::parse;
use http::{HeaderValue, Response, StatusCode, header};
use tonic::Status;
use tonic::body::Body;

use super::Shared;
use super::status::error_response;
use crate::engine::{Analysis, Interrupt, PlayConvention};
use crate::proto::{self, query::Position};
use crate::render::{MAX_SVG_EDGES, MAX_SVG_VERTICES, RenderError};
use crate::service::answer::{QueryEvaluator, StreamOptions};
use crate::service::convert::picture::{drawing_values, position_drawing};
use crate::service::error::ServiceError;
use crate::service::excerpt::{cut_to, excerpt};
use crate::service::rpc::protocol::Protocol;

/// The path's parts around the graph id.
const PREFIX: &str = "/v1/graphs/";
const SUFFIX: &str = "/picture.svg";

/// Most vertices and edges drawn as DOT by URL: about 5 MB of text.
pub(super) const MAX_DOT_EDGES: u64 = 100_000;

/// Most tokens in `tokens` (a URL stays under a few KiB anyway).
const MAX_TOKENS: usize = 1_000;

/// Most characters of `label`.
const MAX_LABEL_CHARS: usize = 60;

/// The route's template, for the OpenAPI document.
pub(super) const OPENAPI_PATH: &str = "/v1/graphs/{graph_id}/picture.svg";

/// The route's operation in the OpenAPI document (`super::openapi`).
pub(super) fn openapi_operation() -> serde_json::Value {
    let parameter = |name: &str, description: &str| {
        serde_json::json!({"name": name, "in": "query", "description": description,
                           "schema": {"type": "string"}})
    };
    serde_json::json!({
        "operationId": "GetPicture",
        "summary": "GetPicture (a drawing, no RPC behind it)",
        "description": "A position of a registered graph drawn as `grundy render` draws it.",
        "parameters": [
            {"name": "graph_id", "in": "path", "required": true, "schema": {"type": "string"}},
            parameter("tokens", "The position: comma-separated token vertices (at most 1000); \
                                 absent, the graph and its values alone."),
            parameter("format", "`svg` (the default) or `dot` (Graphviz DOT)."),
            parameter("convention", "`normal` (the default) or `misere` (misère play, token \
                                     sliding only)."),
            parameter("label", "The caption's first words (at most 60 characters), `graph` by \
                                default."),
        ],
        "responses": {
            "200": {"description": "The picture.", "content": {
                "image/svg+xml": {"schema": {"type": "string"}},
                "text/vnd.graphviz": {"schema": {"type": "string"}},
            }},
            "default": {
                "description": "The call's google.rpc.Status, its HTTP status by code (docs/api.md).",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/google.rpc.Status"}}},
            },
        },
    })
}

/// The graph id of a picture path, when `path` is one.
pub(super) fn graph_of(path: &str) -> Option<&str> {
    let id = path.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

/// The picture format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Svg,
    Dot,
}

/// What the query string asks for.
#[derive(Debug)]
struct PictureQuery {
    tokens: Option<Vec<u32>>,
    format: Format,
    label: String,
    convention: PlayConvention,
}

/// The answer to a picture request of `graph_id` (its method and token already checked).
pub(super) async fn serve(
    shared: Arc<Shared>,
    parts: &http::request::Parts,
    graph_id: &str,
) -> Response<Body> {
    let pool = &shared.pool;
    let query = match parse_query(parts.uri.query()) {
        Ok(query) => query,
        Err(error) => return error_response(pool, &error.into()),
    };
    let service = &shared.service;
    let mut request = http::Request::new(());
    *request.headers_mut() = parts.headers.clone();
    *request.extensions_mut() = parts.extensions.clone();
    request.extensions_mut().insert(Protocol::Json);
    let request = tonic::Request::from_http(request);
    let mut rpc = match service.begin("GetPicture", &request) {
        Ok(rpc) => rpc,
        Err(status) => return error_response(pool, &status),
    };
    let lookup = service
        .registry
        .get_or_load(graph_id, service.config.limits);
    let analysis = match rpc.guard(lookup).await {
        Ok(Ok((analysis, _))) => analysis,
        Ok(Err(error)) => return error_response(pool, &rpc.fail(error.into())),
        Err(status) => return error_response(pool, &rpc.fail(status)),
    };
    rpc.record_graph(graph_id, &analysis);
    // The evaluator's options as a stream with `explain` and this convention would have them.
    let start = proto::EvaluateStart {
        explain: true,
        play_convention: match query.convention {
            PlayConvention::Normal => proto::PlayConvention::Unspecified,
            PlayConvention::Misere => proto::PlayConvention::Misere,
        }
        .into(),
        ..Default::default()
    };
    let options = match service.stream_options(&start) {
        Ok(options) => options,
        Err(error) => return error_response(pool, &rpc.fail(error.into())),
    };
    let drawn = service
        .pool
        .render(move || draw(&analysis, &query, options));
    match rpc.guard(drawn).await {
        Ok(Ok((format, picture))) => {
            rpc.succeed();
            picture_response(format, picture)
        }
        Ok(Err(error)) => error_response(pool, &rpc.fail(error.into())),
        Err(status) => error_response(pool, &rpc.fail(status)),
    }
}

/// The picture `query` asks for of `analysis`'s graph (on the work pool).
fn draw(
    analysis: &Arc<Analysis>,
    query: &PictureQuery,
    options: StreamOptions,
) -> Result<(Format, String), ServiceError> {
    let game = analysis.game();
    let graph = game.graph();
    let (vertices, edges) = (graph.vertex_count(), graph.edge_count());
    let fits = match query.format {
        Format::Svg => vertices <= MAX_SVG_VERTICES && edges <= MAX_SVG_EDGES,
        Format::Dot => u64::from(vertices) <= MAX_DOT_EDGES && edges <= MAX_DOT_EDGES,
    };
    if !fits {
        let message = match query.format {
            Format::Svg => format!(
                "format: the graph has {vertices} vertices and {edges} edges, too large to draw \
                 as SVG (at most {MAX_SVG_VERTICES} vertices and {MAX_SVG_EDGES} edges); ask \
                 for format=dot"
            ),
            Format::Dot => format!(
                "format: the graph has {vertices} vertices and {edges} edges, more than a \
                 picture by URL draws (at most {MAX_DOT_EDGES} of each); read its values with \
                 GetValues"
            ),
        };
        return Err(ServiceError::protocol("format", message));
    }
    if let Some(tokens) = &query.tokens
        && let Some((i, v)) = tokens.iter().enumerate().find(|&(_, &v)| v >= vertices)
    {
        let message =
            format!("tokens[{i}]: vertex {v} is out of range (the graph has {vertices} vertices)");
        return Err(ServiceError::protocol(format!("tokens[{i}]"), message));
    }
    let misere = query.convention == PlayConvention::Misere;
    if misere && game.split_counts().is_some() {
        let message = "convention: misère play is for token sliding; this graph has split \
                       counts (the Addition-Subtraction game)";
        return Err(ServiceError::protocol("convention", message));
    }
    let verdict = query.tokens.as_ref().map(|tokens| {
        let query = proto::Query {
            id: 0,
            position: Some(Position::Tokens(proto::TokenPosition {
                vertices: tokens.clone(),
            })),
        };
        QueryEvaluator::new(analysis.clone(), options).verdict(&query)
    });
    if let Some(error) = verdict.as_ref().and_then(|verdict| verdict.error.as_ref()) {
        let message = format!("tokens: {}", error.message);
        return Err(ServiceError::protocol("tokens", message));
    }
    let values = drawing_values(analysis, query.convention, &Interrupt::new())
        .ok_or_else(|| ServiceError::Internal("no values to draw".to_string()))?;
    let split_counts = game.split_counts().map(<[u32]>::to_vec);
    let position = query.tokens.as_deref().zip(verdict.as_ref());
    let drawing = position_drawing(
        &query.label,
        graph.clone(),
        split_counts,
        values,
        position,
        misere,
    );
    let picture = match query.format {
        Format::Svg => drawing.to_svg(),
        Format::Dot => drawing.to_dot(),
    };
    picture
        .map(|picture| (query.format, picture))
        .map_err(|error| match error {
            RenderError::TooLarge { .. } => ServiceError::protocol("format", error.to_string()),
            _ => ServiceError::Internal(format!("drawing a registered graph: {error}")),
        })
}

/// The query string's parameters, each checked.
fn parse_query(query: Option<&str>) -> Result<PictureQuery, ServiceError> {
    let mut picture = PictureQuery {
        tokens: None,
        format: Format::Svg,
        label: "graph".to_string(),
        convention: PlayConvention::Normal,
    };
    for (name, value) in parse(query.unwrap_or_default().as_bytes()) {
        match &*name {
            "tokens" => {
                let tokens = picture.tokens.get_or_insert_with(Vec::new);
                for part in value.split(',').filter(|part| !part.is_empty()) {
                    let i = tokens.len();
                    if i == MAX_TOKENS {
                        let message = format!("tokens: more than {MAX_TOKENS} tokens");
                        return Err(ServiceError::protocol("tokens", message));
                    }
                    let vertex = part.trim().parse::<u32>().map_err(|_| {
                        let message =
                            format!("tokens[{i}]: {} is not a vertex number", excerpt(part));
                        ServiceError::protocol(format!("tokens[{i}]"), message)
                    })?;
                    tokens.push(vertex);
                }
            }
            "format" => {
                picture.format = match &*value {
                    "svg" => Format::Svg,
                    "dot" => Format::Dot,
                    other => {
                        let message = format!("format: {} is not svg or dot", excerpt(other));
                        return Err(ServiceError::protocol("format", message));
                    }
                };
            }
            "label" => picture.label = value.chars().take(MAX_LABEL_CHARS).collect(),
            "convention" => {
                picture.convention = match &*value {
                    "normal" => PlayConvention::Normal,
                    "misere" => PlayConvention::Misere,
                    other => {
                        let message =
                            format!("convention: {} is not normal or misere", excerpt(other));
                        return Err(ServiceError::protocol("convention", message));
                    }
                };
            }
            other => {
                let message = format!(
                    "{} is not a parameter of a picture (tokens, format, label, convention)",
                    excerpt(other)
                );
                return Err(ServiceError::protocol(cut_to(other, 40), message));
            }
        }
    }
    Ok(picture)
}

/// A picture, cacheable: a registered graph never changes under its id.
fn picture_response(format: Format, picture: String) -> Response<Body> {
    let content_type = match format {
        Format::Svg => "image/svg+xml; charset=utf-8",
        Format::Dot => "text/vnd.graphviz; charset=utf-8",
    };
    let mut response = Response::new(Body::new(http_body_util::Full::new(bytes::Bytes::from(
        picture,
    ))));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=3600"),
    );
    response
}

/// The status of a request for a picture with a method other than GET.
pub(super) fn wrong_method(method: &http::Method) -> Status {
    ServiceError::MethodNotAllowed {
        path: format!("{PREFIX}{{graph_id}}{SUFFIX}"),
        method: method.to_string(),
        allowed: "GET".to_string(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picture_paths_give_their_graph_id() {
        assert_eq!(graph_of("/v1/graphs/abc/picture.svg"), Some("abc"));
        assert_eq!(graph_of("/v1/graphs//picture.svg"), None);
        assert_eq!(graph_of("/v1/graphs/a/b/picture.svg"), None);
        assert_eq!(graph_of("/v1/graphs/abc/values"), None);
    }

    #[test]
    fn query_parameters_are_read_and_checked_by_name() {
        let query = parse_query(Some("tokens=0,2&tokens=5&format=dot&label=case%201")).unwrap();
        assert_eq!(query.tokens, Some(vec![0, 2, 5]));
        assert_eq!(query.format, Format::Dot);
        assert_eq!(query.label, "case 1");
        let bad = |text| parse_query(Some(text)).unwrap_err().to_string();
        assert!(bad("tokens=0,x").starts_with("tokens[1]: \"x\" is not a vertex number"));
        assert!(bad("format=png").contains("not svg or dot"));
        assert!(bad("colour=red").contains("\"colour\" is not a parameter"));
        let many = format!("tokens={}", vec!["1"; MAX_TOKENS + 1].join(","));
        assert!(bad(&many).contains("more than 1000 tokens"));
    }
}
