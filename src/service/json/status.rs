//! Statuses as JSON over HTTP answers them: the HTTP status of a gRPC code (the mapping of
//! grpc-gateway and AIP-193, with a few reasons made more precise), and the body, the
//! `google.rpc.Status` of the call in proto3 JSON, its details (`ErrorInfo`, `BadRequest`,
//! ...) rendered through the descriptor pool from the bytes of `grpc-status-details-bin`.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use prost_reflect::{DescriptorPool, DynamicMessage, SerializeOptions, Value};
use tonic::body::Body;
use tonic::{Code, Status};
use tonic_types::StatusExt;

use crate::proto::ErrorReason;
use crate::service::error::{ServiceError, status_reason};
use crate::service::excerpt::schema_text;

/// The HTTP status of a call that ended with `status`.
pub(crate) fn http_status(status: &Status) -> StatusCode {
    match (status.code(), status_reason(status)) {
        // A body or message over the limit is the request's size, not a rate or quota.
        (Code::ResourceExhausted, Some(ErrorReason::MessageTooLarge)) => {
            StatusCode::PAYLOAD_TOO_LARGE
        }
        // The request itself stopped arriving: the server's wait, not the caller's deadline.
        (Code::DeadlineExceeded, Some(ErrorReason::StartTimeout)) => StatusCode::REQUEST_TIMEOUT,
        (Code::Unimplemented, Some(ErrorReason::UnknownRoute)) => StatusCode::METHOD_NOT_ALLOWED,
        (code, _) => code_status(code),
    }
}

/// The HTTP status of a gRPC code, as grpc-gateway maps it.
fn code_status(code: Code) -> StatusCode {
    let number = match code {
        Code::Ok => 200,
        Code::Cancelled => 499,
        Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => 400,
        Code::DeadlineExceeded => 504,
        Code::NotFound => 404,
        Code::AlreadyExists | Code::Aborted => 409,
        Code::PermissionDenied => 403,
        Code::Unauthenticated => 401,
        Code::ResourceExhausted => 429,
        Code::Unimplemented => 501,
        Code::Unavailable => 503,
        Code::Unknown | Code::Internal | Code::DataLoss => 500,
    };
    StatusCode::from_u16(number).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// `status` as a `google.rpc.Status` in JSON.
pub(crate) fn status_json(pool: &DescriptorPool, status: &Status) -> Vec<u8> {
    rpc_status(pool, status, true)
        .and_then(|message| serialize(&message))
        // A detail whose type the pool does not know: the code and message still go out.
        .or_else(|| rpc_status(pool, status, false).and_then(|message| serialize(&message)))
        .unwrap_or_else(|| {
            let json =
                serde_json::json!({"code": status.code() as i32, "message": status.message()});
            json.to_string().into_bytes()
        })
}

/// The `google.rpc.Status` of `status`: its details as sent, with the code and message of
/// the status itself (a message bounded on its way out stays bounded).
fn rpc_status(pool: &DescriptorPool, status: &Status, details: bool) -> Option<DynamicMessage> {
    let descriptor = pool.get_message_by_name("google.rpc.Status")?;
    let mut message = match details && !status.details().is_empty() {
        true => DynamicMessage::decode(descriptor.clone(), status.details()).ok()?,
        false => DynamicMessage::new(descriptor),
    };
    message.set_field_by_name("code", Value::I32(status.code() as i32));
    message.set_field_by_name("message", Value::String(status.message().to_string()));
    if !details {
        message.clear_field_by_name("details");
    }
    Some(message)
}

/// `message` in proto3 JSON, every field written.
pub(crate) fn serialize(message: &DynamicMessage) -> Option<Vec<u8>> {
    let mut json = Vec::new();
    let mut serializer = serde_json::Serializer::new(&mut json);
    let options = SerializeOptions::new().skip_default_fields(false);
    message
        .serialize_with_options(&mut serializer, &options)
        .ok()?;
    Some(json)
}

/// The answer to a call that failed with `status` before any of its answer was sent.
pub(crate) fn error_response(pool: &DescriptorPool, status: &Status) -> Response<Body> {
    let mut response = json_response(http_status(status), status_json(pool, status));
    if let Some(retry) = status.get_details_retry_info()
        && let Some(delay) = retry.retry_delay
    {
        // Whole seconds, rounded up: a client waiting that long is let through.
        let seconds = delay.as_millis().div_ceil(1000).max(1);
        if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
    }
    response
}

/// A response of `status` with a JSON body.
pub(crate) fn json_response(status: StatusCode, json: Vec<u8>) -> Response<Body> {
    let mut response = Response::new(Body::new(http_body_util::Full::new(Bytes::from(json))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// `text` cut as a decoder's text is (the same bound as gRPC's).
pub(super) fn bounded(text: &str) -> String {
    schema_text(text)
}

/// INVALID_ARGUMENT about `field`.
pub(super) fn invalid(field: &str, message: String) -> Status {
    ServiceError::protocol(bounded(field), message).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::error::ServiceError;

    #[test]
    fn codes_map_to_the_usual_http_statuses() {
        let cases = [
            (Code::InvalidArgument, 400),
            (Code::Unauthenticated, 401),
            (Code::PermissionDenied, 403),
            (Code::NotFound, 404),
            (Code::ResourceExhausted, 429),
            (Code::FailedPrecondition, 400),
            (Code::Cancelled, 499),
            (Code::Internal, 500),
            (Code::Unimplemented, 501),
            (Code::Unavailable, 503),
            (Code::DeadlineExceeded, 504),
        ];
        for (code, http) in cases {
            assert_eq!(
                http_status(&Status::new(code, "x")).as_u16(),
                http,
                "{code:?}"
            );
        }
        let too_large = ServiceError::JsonBodyTooLarge {
            limit: 10,
            size: Some(11),
        };
        assert_eq!(http_status(&too_large.into()).as_u16(), 413);
    }

    #[test]
    fn details_are_rendered_as_json_through_the_pool() {
        let pool = DescriptorPool::decode(crate::proto::FILE_DESCRIPTOR_SET).unwrap();
        let status = Status::from(ServiceError::protocol("start", "start is missing"));
        let json: serde_json::Value = serde_json::from_slice(&status_json(&pool, &status)).unwrap();
        assert_eq!(json["code"], 3);
        assert_eq!(json["message"], "start is missing");
        let details = json["details"].as_array().unwrap();
        let types: Vec<_> = details
            .iter()
            .map(|detail| detail["@type"].as_str().unwrap())
            .collect();
        assert!(
            types.contains(&"type.googleapis.com/google.rpc.ErrorInfo"),
            "{json}"
        );
        let bad_request = details
            .iter()
            .find(|detail| detail["@type"] == "type.googleapis.com/google.rpc.BadRequest")
            .unwrap();
        assert_eq!(bad_request["fieldViolations"][0]["field"], "start");
    }
}
