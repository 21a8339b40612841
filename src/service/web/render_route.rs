//! `POST /render`: the page's graph, values and position in JSON, answered with the SVG that
//! `grundy render` would draw.
//!
//! The values are the page's own (from `GetValues`): the route only draws, it runs no game
//! analysis, so its cost is bounded by the drawing's size limit. That cost is still up to a
//! second of a core (a 300-vertex graph), so the parsing and drawing run on the work pool
//! behind its render permits, never on a runtime thread: four drawings there held up every
//! gRPC call of the server for seconds.
//!
//! The body is bounded before it is read: one announced over [`MAX_RENDER_BODY_BYTES`] is
//! refused at once, at most [`MAX_RENDER_BODIES`] are received at a time, and one that
//! brings nothing for the server's start timeout (`--start-timeout`) is ended, so that
//! clients sending bodies all but whole and then nothing no longer hold their bytes.
//!
//! Errors are plain text, `400` naming the field (`values[3]: ...`), `401` without the bearer
//! token when the server requires one, `408` for a body that stalled, `413` for a body over
//! [`MAX_RENDER_BODY_BYTES`], `422` for a graph too large to draw, `503` (with `Retry-After`)
//! when [`MAX_RENDER_BODIES`] are being received or no render permit comes free within the
//! queue timeout.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use serde::Deserialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::Status;
use tonic::body::Body;

use super::responses::{response, text_response};
use crate::engine::{Digraph, Outcome};
use crate::render::{Drawing, Highlight, RenderError, Value};
use crate::service::auth::BearerAuth;
use crate::service::blocking::WorkPool;
use crate::service::error::ServiceError;
use crate::service::rpc::activity::StallTimeout;

/// The JSON body of `POST /render`. Field names follow `grundy.v1.Graph` (the targets as
/// `targets` only: `fixed_targets` is a wire encoding, which JSON does not need).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenderRequest {
    /// `Graph.out_degrees`; the vertex count is its length.
    pub out_degrees: Vec<u32>,
    /// `Graph.targets`.
    pub targets: Vec<u32>,
    /// `Graph.split_counts` (Addition-Subtraction); absent or empty for token sliding.
    #[serde(default)]
    pub split_counts: Vec<u32>,
    /// One value per vertex: `{"finite": 2}` or `{"infinite": [0, 3]}` (the K set).
    pub values: Vec<ValueJson>,
    /// Tokens per vertex (or the vertex values of an Addition-Subtraction position).
    #[serde(default)]
    pub tokens: Vec<u64>,
    /// A move to highlight: `{"from": 0, "to": [2]}`.
    #[serde(default)]
    pub highlight: Option<HighlightJson>,
    /// The move that led to the position, drawn dashed; same form as `highlight`.
    #[serde(default)]
    pub last_move: Option<HighlightJson>,
    /// The id to draw for each vertex when the graph sent is a part of a bigger one (the
    /// page's view around the position); the SVG's `data-vertex` carries these ids.
    #[serde(default)]
    pub vertex_ids: Vec<u32>,
    /// Vertices (indices into this graph) with moves left out of the part sent.
    #[serde(default)]
    pub partial: Vec<u32>,
    /// Whether to draw the legend (default true); without it only the caption is drawn.
    #[serde(default = "yes")]
    pub legend: bool,
    /// A caption line.
    #[serde(default)]
    pub caption: Option<String>,
}

/// A vertex value in JSON.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueJson {
    /// A nimber.
    Finite(u64),
    /// `∞(K)`.
    Infinite(Vec<u64>),
    /// Misère play: the outcome of one token and its remoteness.
    Misere(MisereJson),
}

/// A vertex's misère value in JSON: `{"outcome": "lose", "remoteness": 3}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MisereJson {
    /// `win`, `lose` or `draw`.
    pub outcome: OutcomeJson,
    /// Absent (or null) for a draw.
    #[serde(default)]
    pub remoteness: Option<u32>,
}

/// An outcome in JSON.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeJson {
    /// WIN.
    Win,
    /// LOSE.
    Lose,
    /// DRAW.
    Draw,
}

/// A highlighted move in JSON.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HighlightJson {
    /// The vertex moved from.
    pub from: u32,
    /// The vertices moved to.
    pub to: Vec<u32>,
}

fn yes() -> bool {
    true
}

/// Largest `POST /render` body: a drawable graph (a few hundred vertices) needs far less.
const MAX_RENDER_BODY_BYTES: usize = 1 << 20;

/// Most `POST /render` bodies received at once: 16 MiB held at most, however many clients
/// send at a time. More are refused (`503`) rather than queued: a body waiting in a queue
/// would be held all the same.
const MAX_RENDER_BODIES: usize = 16;

/// Longest caption drawn: it is client text, so it is kept short.
const MAX_CAPTION_CHARS: usize = 200;

/// The SVG for a parsed request, or the error naming the offending field.
pub fn render_svg(request: RenderRequest) -> Result<String, RenderError> {
    let vertex_count = u32::try_from(request.out_degrees.len()).unwrap_or(u32::MAX);
    let graph = Digraph::from_out_degrees(vertex_count, &request.out_degrees, request.targets)
        .map_err(|error| RenderError::Invalid {
            field: "graph".into(),
            message: error.to_string(),
        })?;
    let values = request
        .values
        .into_iter()
        .map(|value| match value {
            ValueJson::Finite(v) => Value::Finite(v),
            ValueJson::Infinite(k) => Value::Infinite(k),
            ValueJson::Misere(MisereJson {
                outcome,
                remoteness,
            }) => Value::Misere {
                outcome: match outcome {
                    OutcomeJson::Win => Outcome::Win,
                    OutcomeJson::Lose => Outcome::Lose,
                    OutcomeJson::Draw => Outcome::Draw,
                },
                remoteness,
            },
        })
        .collect();
    let n = vertex_count as usize;
    let mut partial = vec![false; n];
    for (i, &v) in request.partial.iter().enumerate() {
        let slot = partial
            .get_mut(v as usize)
            .ok_or_else(|| RenderError::Invalid {
                field: format!("partial[{i}]"),
                message: format!("vertex {v} is out of range (vertex_count {n})"),
            })?;
        *slot = true;
    }
    let highlight = |h: HighlightJson| Highlight {
        from: h.from,
        to: h.to,
    };
    let drawing = Drawing {
        graph,
        split_counts: (!request.split_counts.is_empty()).then_some(request.split_counts),
        values,
        tokens: request.tokens,
        highlight: request.highlight.map(highlight),
        last_move: request.last_move.map(highlight),
        caption: request
            .caption
            .map(|c| c.chars().take(MAX_CAPTION_CHARS).collect()),
        ids: (!request.vertex_ids.is_empty()).then_some(request.vertex_ids),
        partial: if request.partial.is_empty() {
            Vec::new()
        } else {
            partial
        },
        legend: request.legend,
    };
    drawing.to_svg()
}

/// `POST /render`: its guard and the pool its drawings run on. Cheap to clone (handles).
#[derive(Debug, Clone)]
pub(super) struct RenderRoute {
    auth: BearerAuth,
    pool: WorkPool,
    /// Longest a body may bring nothing before it is ended (the start timeout).
    body_timeout: Duration,
    /// The permits of the bodies being received ([`MAX_RENDER_BODIES`]).
    bodies: Arc<Semaphore>,
}

impl RenderRoute {
    pub(super) fn new(auth: BearerAuth, pool: WorkPool, body_timeout: Duration) -> Self {
        Self {
            auth,
            pool,
            body_timeout,
            bodies: Arc::new(Semaphore::new(MAX_RENDER_BODIES)),
        }
    }

    /// Answers one `POST /render`.
    pub(super) async fn handle(&self, request: Request<Body>) -> Response<Body> {
        let authorization = request
            .headers()
            .get(header::AUTHORIZATION)
            .map(|value| value.as_bytes());
        if let Err(error) = self.auth.check(authorization) {
            return text_response(StatusCode::UNAUTHORIZED, &error.to_string());
        }
        // The body holds its place among the bodies received until it is drawn: one waiting
        // for a render permit is memory held all the same.
        let (body, _held) = match self.read_body(request).await {
            Ok(body) => body,
            Err(refusal) => return refusal,
        };
        match self.pool.render(move || Ok(answer_sync(&body))).await {
            Ok(answer) => answer,
            Err(error @ ServiceError::QueueFull { .. }) => {
                retry_later(StatusCode::SERVICE_UNAVAILABLE, &error.to_string())
            }
            Err(error @ ServiceError::ShuttingDown) => {
                text_response(StatusCode::SERVICE_UNAVAILABLE, &error.to_string())
            }
            Err(error) => text_response(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
        }
    }
}

impl RenderRoute {
    /// The request's whole body, within the route's bounds, with its place among the bodies
    /// held (to keep until it is answered); else the answer refusing it.
    async fn read_body(
        &self,
        request: Request<Body>,
    ) -> Result<(Bytes, OwnedSemaphorePermit), Response<Body>> {
        let too_large = || {
            let message = format!("the request body is over {MAX_RENDER_BODY_BYTES} bytes");
            text_response(StatusCode::PAYLOAD_TOO_LARGE, &message)
        };
        let announced = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|length| length.to_str().ok()?.parse::<u64>().ok());
        if announced.is_some_and(|length| length > MAX_RENDER_BODY_BYTES as u64) {
            return Err(too_large());
        }
        let Ok(receiving) = self.bodies.clone().try_acquire_owned() else {
            let message =
                format!("{MAX_RENDER_BODIES} render requests are being received; retry later");
            return Err(retry_later(StatusCode::SERVICE_UNAVAILABLE, &message));
        };
        let timeout = self.body_timeout;
        let stalled = move || {
            Status::deadline_exceeded(format!(
                "the request body brought nothing for the server's start_timeout of \
                 {timeout:?}; send it whole without pauses"
            ))
        };
        let body = StallTimeout::new(request.into_body(), timeout, stalled);
        match Limited::new(body, MAX_RENDER_BODY_BYTES).collect().await {
            Ok(collected) => Ok((collected.to_bytes(), receiving)),
            Err(error) if error.is::<http_body_util::LengthLimitError>() => Err(too_large()),
            Err(error) => match error.downcast::<Status>() {
                Ok(stalled) => Err(text_response(
                    StatusCode::REQUEST_TIMEOUT,
                    stalled.message(),
                )),
                Err(error) => {
                    let message = format!("cannot read the request body: {error}");
                    Err(text_response(StatusCode::BAD_REQUEST, &message))
                }
            },
        }
    }
}

/// A plain-text answer with `Retry-After: 1`: the server is busy, not the request wrong.
fn retry_later(status: StatusCode, message: &str) -> Response<Body> {
    let mut answer = text_response(status, message);
    answer
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    answer
}

/// The answer to a render request's whole body: parsed, then drawn (on the work pool).
fn answer_sync(body: &Bytes) -> Response<Body> {
    let parsed: RenderRequest = match serde_json::from_slice(body) {
        Ok(parsed) => parsed,
        Err(error) => {
            // serde_json names the line and column; its excerpts of the input are short.
            let message = format!("invalid render request: {error}");
            return text_response(StatusCode::BAD_REQUEST, &message);
        }
    };
    match render_svg(parsed) {
        Ok(svg) => response(StatusCode::OK, "image/svg+xml; charset=utf-8", svg.into()),
        Err(error @ RenderError::TooLarge { .. }) => {
            text_response(StatusCode::UNPROCESSABLE_ENTITY, &error.to_string())
        }
        Err(error) => text_response(StatusCode::BAD_REQUEST, &error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> RenderRequest {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn misere_values_are_drawn_as_outcome_letters_and_remoteness() {
        let request = parse(
            r#"{"out_degrees":[1,0],"targets":[1],"values":[{"misere":{"outcome":"lose",
                "remoteness":1}},{"misere":{"outcome":"win","remoteness":0}}]}"#,
        );
        let svg = render_svg(request).unwrap();
        assert!(svg.contains("data-vertex=\"0\" data-value=\"L1\" data-outcome=\"lose\""));
        assert!(svg.contains("data-vertex=\"1\" data-value=\"W0\" data-outcome=\"win\""));
    }

    #[test]
    fn a_request_is_drawn_with_its_values() {
        let request = parse(
            r#"{"out_degrees":[1,0],"targets":[1],"values":[{"finite":1},{"finite":0}],
                "tokens":[1,0],"highlight":{"from":0,"to":[1]},"caption":"case 1"}"#,
        );
        let svg = render_svg(request).unwrap();
        assert!(svg.contains("data-vertex=\"1\" data-value=\"0\" data-outcome=\"lose\""));
        assert!(svg.contains("class=\"edge move\" data-from=\"0\" data-to=\"1\""));
    }

    #[test]
    fn a_part_of_a_bigger_graph_is_drawn_with_its_own_ids() {
        // Vertices 7 -> 9 of a bigger graph; 9 has moves that are not drawn.
        let request = parse(
            r#"{"out_degrees":[1,0],"targets":[1],"values":[{"finite":1},{"finite":0}],
                "tokens":[1,0],"vertex_ids":[7,9],"partial":[1],
                "last_move":{"from":0,"to":[1]}}"#,
        );
        let svg = render_svg(request).unwrap();
        assert!(svg.contains("data-vertex=\"7\" data-value=\"1\""), "{svg}");
        assert!(svg.contains("data-vertex=\"9\" data-value=\"0\" data-outcome=\"lose\" data-tokens=\"0\" data-partial=\"1\""), "{svg}");
        assert!(
            svg.contains("class=\"edge last\" data-from=\"7\" data-to=\"9\""),
            "{svg}"
        );
        let request =
            parse(r#"{"out_degrees":[0],"targets":[],"values":[{"finite":0}],"partial":[3]}"#);
        assert_eq!(
            render_svg(request).unwrap_err().to_string(),
            "partial[0]: vertex 3 is out of range (vertex_count 1)"
        );
    }

    #[test]
    fn bad_requests_name_the_field() {
        let request = parse(r#"{"out_degrees":[1],"targets":[4],"values":[{"finite":0}]}"#);
        assert_eq!(
            render_svg(request).unwrap_err().to_string(),
            "graph: targets[0] = 4 is out of range (vertex_count 1)"
        );
        let request = parse(r#"{"out_degrees":[0],"targets":[],"values":[]}"#);
        assert!(
            render_svg(request)
                .unwrap_err()
                .to_string()
                .starts_with("values:")
        );
        let error =
            serde_json::from_str::<RenderRequest>(r#"{"out_degrees":[0],"colour":1}"#).unwrap_err();
        assert!(
            error.to_string().contains("unknown field `colour`"),
            "{error}"
        );
    }
}
