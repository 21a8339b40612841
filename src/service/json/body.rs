//! A JSON request's body, read whole under a byte limit and the start timeout: refused by
//! its `Content-Length` before a byte of it is read, counted as it arrives otherwise, and
//! ended once it brings nothing for `--start-timeout` (the clock the unary gRPC calls use,
//! [`StallTimeout`]).

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, header};
use http_body_util::BodyExt;
use tonic::Status;
use tonic::body::Body;

use crate::service::error::ServiceError;
use crate::service::rpc::activity::StallTimeout;

/// Most bytes of a JSON body, whatever `--max-message-bytes` allows: the body is held whole,
/// and decoded into a message of values many times its size (a `[1,2,...]` array takes
/// tens of bytes per two bytes of JSON), so it is bounded well under gRPC's default message
/// limit. Larger graphs go up through gRPC `PutGraph` in chunks.
const MAX_JSON_BODY_BYTES: usize = 1 << 20;

/// JSON bodies received and transcoded at a time, from their first byte to the gRPC request
/// made of them; more are refused (`503` with `Retry-After`) rather than queued, since a body
/// waiting would be held all the same. With [`MAX_JSON_BODY_BYTES`], what JSON callers can
/// make the server hold before their calls are admitted: 16 MiB of bodies, and their decoded
/// values while they are transcoded.
pub(crate) const MAX_JSON_BODIES: usize = 16;

/// The JSON body limit of a server whose message limit is `max_message_bytes`.
pub(crate) fn json_body_limit(max_message_bytes: usize) -> usize {
    max_message_bytes.min(MAX_JSON_BODY_BYTES)
}

/// Refuses a body whose `Content-Length` is over `limit`, before reading it.
pub(crate) fn check_declared_length(headers: &HeaderMap, limit: usize) -> Result<(), Status> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    match declared {
        Some(size) if size > limit as u64 => Err(too_large(limit, Some(size))),
        _ => Ok(()),
    }
}

/// The whole of `body`, at most `limit` bytes, failed with `on_stall()` once it brings
/// nothing for `timeout`.
pub(crate) async fn read_limited(
    body: Body,
    limit: usize,
    timeout: Duration,
    on_stall: impl FnOnce() -> Status + Send + 'static,
) -> Result<Bytes, Status> {
    let mut body = StallTimeout::new(body, timeout, on_stall);
    let mut bytes = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|status| {
            // The client reset the stream or closed its connection, or the body stalled.
            match status.code() {
                tonic::Code::DeadlineExceeded => status,
                _ => Status::cancelled(format!("the request body failed: {}", status.message())),
            }
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if bytes.len() + data.len() > limit {
            return Err(too_large(limit, None));
        }
        bytes.extend_from_slice(&data);
    }
    Ok(bytes.freeze())
}

/// The status of a body over `limit`.
fn too_large(limit: usize, size: Option<u64>) -> Status {
    ServiceError::JsonBodyTooLarge {
        limit: limit as u64,
        size,
    }
    .into()
}
