//! The gRPC answer of a transcoded call made into JSON: each response message decoded into its
//! prost struct and written in proto3 JSON by the generated serde code (`generated`: every
//! field, 64-bit integers as strings), straight into the chunk sent (a message of another
//! package through the descriptors); the final status read from the trailers.
//!
//! - A unary answer (`PutGraph`) is one JSON object, or the error's `google.rpc.Status` with
//!   its HTTP status.
//! - A server stream asked for with `Accept: application/x-ndjson` is one object per line,
//!   each sent as it comes; an error before the first line is answered as a unary error is,
//!   one after it is a last line `{"error": <google.rpc.Status>}`.
//! - Otherwise a server stream is one JSON array, held back until the stream ends so that an
//!   error still gets its HTTP status; past [`ARRAY_HOLD_BYTES`] the array is sent as it
//!   grows, and an error after that is its last element, `{"error": <google.rpc.Status>}`.

use bytes::{Buf, Bytes, BytesMut};
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::Frame;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};
use tokio::sync::mpsc;
use tonic::Status;
use tonic::body::Body;

use super::generated::Generated;
use super::status::{error_response, json_response, serialize, status_json};

/// The media type of newline-delimited JSON.
pub(crate) const NDJSON: &str = "application/x-ndjson";

/// Most bytes of a JSON array held back before it is sent as it grows.
const ARRAY_HOLD_BYTES: usize = 4 << 20;

/// Lines or array parts on their way to the client, besides the one being written.
const CHANNEL_CAPACITY: usize = 8;

/// How the caller asked for a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamForm {
    /// One JSON object per line.
    Ndjson,
    /// One JSON array.
    Array,
}

/// The JSON answer of a gRPC `response` whose messages are of type `output`.
pub(crate) async fn respond(
    pool: DescriptorPool,
    output: MessageDescriptor,
    form: Option<StreamForm>,
    response: Response<Body>,
) -> Response<Body> {
    let mut messages = GrpcMessages::new(response);
    // The generated code for the package's messages; the descriptors for any other.
    let generated = Generated::by_name(output.full_name());
    let json = move |bytes: &[u8], out: &mut Vec<u8>| {
        let written = match generated {
            Some(generated) => generated.write_json(bytes, out).is_ok(),
            None => DynamicMessage::decode(output.clone(), bytes)
                .ok()
                .and_then(|message| serialize(&message))
                .map(|json| out.extend_from_slice(&json))
                .is_some(),
        };
        written
            .then_some(())
            .ok_or_else(|| Status::internal("a response message does not decode"))
    };
    let to_vec = |bytes: Bytes| {
        let mut out = Vec::with_capacity(json_capacity(&bytes));
        json(&bytes, &mut out).map(|()| out)
    };
    let first = match messages.next().await {
        None => None,
        Some(Ok(bytes)) => match to_vec(bytes) {
            Ok(line) => Some(line),
            Err(status) => return error_response(&pool, &status),
        },
        Some(Err(status)) => return error_response(&pool, &status),
    };
    let Some(form) = form else {
        // Unary: one message, then the status.
        return match (first, messages.next().await) {
            (Some(message), None) => json_response(StatusCode::OK, message),
            (_, Some(Err(status))) => error_response(&pool, &status),
            _ => error_response(&pool, &Status::internal("not one response message")),
        };
    };
    let mut held = Vec::new();
    if form == StreamForm::Array {
        held.push(b'[');
        let mut first_element = true;
        let mut next = first.map(Ok);
        loop {
            let element = match next.take() {
                Some(element) => element,
                None => match messages.next().await {
                    None => break,
                    Some(Ok(bytes)) => to_vec(bytes),
                    Some(Err(status)) => Err(status),
                },
            };
            let element = match element {
                Ok(element) => element,
                Err(status) => return error_response(&pool, &status),
            };
            if !first_element {
                held.push(b',');
            }
            first_element = false;
            held.extend_from_slice(&element);
            if held.len() > ARRAY_HOLD_BYTES {
                return streamed(pool, form, held, !first_element, messages, json);
            }
        }
        held.push(b']');
        return json_response(StatusCode::OK, held);
    }
    let started = first.is_some();
    if let Some(mut line) = first {
        line.push(b'\n');
        held = line;
    }
    streamed(pool, form, held, started, messages, json)
}

/// The answer sent as it is produced: `head` first, then each message, by a task that ends
/// when the client goes (its receiver dropped), dropping the gRPC call with it. Each message is
/// written straight into the chunk that carries it, with its separator.
fn streamed(
    pool: DescriptorPool,
    form: StreamForm,
    head: Vec<u8>,
    mut started: bool,
    mut messages: GrpcMessages,
    json: impl Fn(&[u8], &mut Vec<u8>) -> Result<(), Status> + Send + 'static,
) -> Response<Body> {
    let (sender, receiver) = mpsc::channel::<Bytes>(CHANNEL_CAPACITY);
    tokio::spawn(async move {
        if !head.is_empty() && sender.send(Bytes::from(head)).await.is_err() {
            return;
        }
        let (separator, close): (&[u8], &[u8]) = match form {
            StreamForm::Ndjson => (b"", b"\n"),
            StreamForm::Array => (b",", b"]"),
        };
        let error = |chunk: &mut Vec<u8>, status: &Status| {
            chunk.extend_from_slice(&error_line(&pool, status));
        };
        loop {
            let next = messages.next().await;
            let mut chunk = Vec::new();
            if next.is_some() && started {
                chunk.extend_from_slice(separator);
            }
            let end = match next {
                None => true,
                Some(Ok(bytes)) => {
                    chunk.reserve(json_capacity(&bytes));
                    let mark = chunk.len();
                    match json(&bytes, &mut chunk) {
                        Ok(()) => false,
                        Err(status) => {
                            chunk.truncate(mark);
                            error(&mut chunk, &status);
                            true
                        }
                    }
                }
                Some(Err(status)) => {
                    error(&mut chunk, &status);
                    true
                }
            };
            started |= !chunk.is_empty();
            if form == StreamForm::Ndjson && !chunk.is_empty() || end && form == StreamForm::Array {
                chunk.extend_from_slice(close);
            }
            if !chunk.is_empty() && sender.send(Bytes::from(chunk)).await.is_err() {
                return;
            }
            if end {
                return;
            }
        }
    });
    let frames = tokio_stream::wrappers::ReceiverStream::new(receiver);
    let body = http_body_util::StreamBody::new(tokio_stream::StreamExt::map(frames, |bytes| {
        Ok::<_, std::convert::Infallible>(Frame::data(bytes))
    }));
    let mut response = Response::new(Body::new(body));
    let content_type = match form {
        StreamForm::Ndjson => NDJSON,
        StreamForm::Array => "application/json",
    };
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// Room for the JSON of a message of these protobuf bytes, so that writing it seldom grows
/// the buffer (a verdict of a token query takes some 10 bytes encoded, 130 in JSON).
fn json_capacity(bytes: &[u8]) -> usize {
    bytes.len().saturating_mul(16).saturating_add(64)
}

/// `{"error": <google.rpc.Status>}`.
fn error_line(pool: &DescriptorPool, status: &Status) -> Vec<u8> {
    let mut line = b"{\"error\":".to_vec();
    line.extend_from_slice(&status_json(pool, status));
    line.push(b'}');
    line
}

/// The messages of a gRPC response, then its status.
struct GrpcMessages {
    body: Option<Body>,
    buffer: BytesMut,
    /// The status of a trailers-only answer, or of the trailers once read.
    status: Option<Status>,
}

impl GrpcMessages {
    fn new(response: Response<Body>) -> Self {
        let (parts, body) = response.into_parts();
        let status = Status::from_header_map(&parts.headers);
        let status = match (status, parts.status) {
            (Some(status), _) => Some(status),
            (None, StatusCode::OK) => None,
            (None, http) => Some(Status::internal(format!("the call answered HTTP {http}"))),
        };
        Self {
            body: status.is_none().then_some(body),
            buffer: BytesMut::new(),
            status,
        }
    }

    /// The next message; at the end, the status when it is no OK.
    async fn next(&mut self) -> Option<Result<Bytes, Status>> {
        loop {
            if let Some(message) = self.take_message() {
                return Some(message);
            }
            let Some(body) = self.body.as_mut() else {
                return self.finish();
            };
            match body.frame().await {
                None => self.body = None,
                Some(Err(status)) => {
                    self.body = None;
                    self.status = Some(status);
                }
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => self.buffer.extend_from_slice(&data),
                    Err(frame) => {
                        if let Some(trailers) = frame.trailers_ref() {
                            self.status = Status::from_header_map(trailers);
                        }
                    }
                },
            }
        }
    }

    /// A whole message at the front of the buffer.
    fn take_message(&mut self) -> Option<Result<Bytes, Status>> {
        if self.buffer.len() < 5 {
            return None;
        }
        if self.buffer[0] != 0 {
            self.body = None;
            self.buffer.clear();
            return Some(Err(Status::internal("a compressed response message")));
        }
        let length = u32::from_be_bytes([
            self.buffer[1],
            self.buffer[2],
            self.buffer[3],
            self.buffer[4],
        ]);
        let length = usize::try_from(length).ok()?;
        if self.buffer.len() < 5 + length {
            return None;
        }
        self.buffer.advance(5);
        Some(Ok(self.buffer.split_to(length).freeze()))
    }

    /// The end: nothing for OK, the status otherwise.
    fn finish(&mut self) -> Option<Result<Bytes, Status>> {
        let status = self.status.take();
        if !self.buffer.is_empty() {
            self.buffer.clear();
            return Some(Err(Status::internal("the response ended inside a message")));
        }
        match status {
            Some(status) if status.code() == tonic::Code::Ok => None,
            Some(status) => Some(Err(status)),
            None => Some(Err(Status::internal("the response ended without a status"))),
        }
    }
}
