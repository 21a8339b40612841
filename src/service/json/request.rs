//! A JSON request made into the gRPC request of its route: the body decoded from proto3 JSON
//! through the descriptors (`prost_reflect::DynamicMessage`, unknown fields refused), the
//! path's variables and the query parameters set on their fields, each message encoded and
//! framed as gRPC frames it (a five-byte prefix each).
//!
//! A client-streaming route (`PutGraph`) takes one JSON value as one message, or a JSON
//! array as a message per element, each encoded as soon as it is decoded.

use std::fmt;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use prost::Message;
use prost_reflect::{
    DeserializeOptions, DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, Value,
};
use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
use tonic::Status;

use super::parameters::{TIMEOUT_PARAMETER, parse_timeout, set_path};
use super::routes::{BodyMapping, Route};
use super::status::{bounded, invalid};
use crate::service::error::ServiceError;
use crate::service::excerpt::excerpt;

/// The gRPC request of a JSON request.
#[derive(Debug)]
pub(crate) struct Transcoded {
    /// The gRPC frames of the request's messages.
    pub(crate) frames: Bytes,
    /// The deadline of the `timeout` query parameter.
    pub(crate) timeout: Option<Duration>,
}

/// The gRPC request of `route` from its path's `variables`, its `query` string and `body`.
pub(crate) fn transcode(
    route: &Route,
    variables: &[(String, String)],
    query: Option<&str>,
    body: &[u8],
) -> Result<Transcoded, Status> {
    let mut timeout = None;
    let mut parameters = Vec::new();
    for (name, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        if name == TIMEOUT_PARAMETER {
            timeout = Some(parse_timeout(&value)?);
        } else if route.body == BodyMapping::Whole {
            let message = format!(
                "query parameter {}: this route takes every field in its body",
                excerpt(&name)
            );
            return Err(invalid(&name, message));
        } else {
            parameters.push((name.into_owned(), value.into_owned()));
        }
    }
    let mut variables: Vec<_> = variables
        .iter()
        .map(|(field, raw)| {
            let value = percent_encoding::percent_decode_str(raw).decode_utf8_lossy();
            (field.clone(), value.into_owned())
        })
        .collect();
    variables.extend(parameters);

    let mut frames = BytesMut::new();
    let mut finish = |mut message: DynamicMessage| -> Result<(), Status> {
        for (path, value) in &variables {
            set_path(&mut message, path, path, value)?;
        }
        let encoded = message.encode_to_vec();
        let length = u32::try_from(encoded.len()).map_err(|_| {
            Status::from(ServiceError::JsonBodyTooLarge {
                limit: u32::MAX.into(),
                size: None,
            })
        })?;
        frames.put_u8(0);
        frames.put_u32(length);
        frames.put_slice(&encoded);
        Ok(())
    };
    match &route.body {
        BodyMapping::None => {
            if !body.trim_ascii().is_empty() {
                return Err(invalid("body", format!("{} takes no body", route.method)));
            }
            finish(DynamicMessage::new(route.input.clone()))?;
        }
        BodyMapping::Whole | BodyMapping::Field(_) => {
            let (element, field) = body_element(route)?;
            let wrap = |element: DynamicMessage| match &field {
                None => element,
                Some(field) => {
                    let mut request = DynamicMessage::new(route.input.clone());
                    request.set_field(field, Value::Message(element));
                    request
                }
            };
            let body = if body.trim_ascii().is_empty() {
                &b"{}"[..]
            } else {
                body
            };
            let array = route.client_streaming && body.trim_ascii_start().first() == Some(&b'[');
            let mut failure = None;
            let seed = Messages {
                descriptor: element,
                array,
                each: &mut |message| {
                    finish(wrap(message)).map_err(|status| {
                        let text = status.message().to_string();
                        failure = Some(status);
                        text
                    })
                },
            };
            let decoded = decode_json(body, seed);
            if let Some(status) = failure {
                return Err(status);
            }
            decoded?;
        }
    }
    Ok(Transcoded {
        frames: frames.freeze(),
        timeout,
    })
}

/// The message a body holds, and the request field it goes into (none for `*`).
fn body_element(route: &Route) -> Result<(MessageDescriptor, Option<FieldDescriptor>), Status> {
    match &route.body {
        BodyMapping::Field(name) => {
            let field = route.input.get_field_by_name(name);
            match field.as_ref().map(FieldDescriptor::kind) {
                Some(Kind::Message(element)) => Ok((element, field)),
                _ => Err(Status::internal(format!("body field {name} is no message"))),
            }
        }
        _ => Ok((route.input.clone(), None)),
    }
}

/// Decodes `body` with `seed`, the error naming the JSON path, line, column and byte.
fn decode_json(body: &[u8], seed: Messages<'_>) -> Result<(), Status> {
    let mut json = serde_json::Deserializer::from_slice(body);
    let mut track = serde_path_to_error::Track::new();
    let result = seed
        .deserialize(serde_path_to_error::Deserializer::new(
            &mut json, &mut track,
        ))
        .and_then(|()| json.end());
    let Err(error) = result else {
        return Ok(());
    };
    let path = track.path().to_string();
    let (line, column) = (error.line(), error.column());
    let text = error.to_string();
    let text = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(text, _)| text);
    let location = format!(
        "line {line}, column {column}, byte {}",
        byte_offset(body, line, column)
    );
    // An unknown field is named by the error, not yet in the path.
    let unknown = text
        .strip_prefix("unrecognized field name '")
        .and_then(|rest| rest.split_once('\'').map(|(name, _)| name));
    let field = match (path.as_str(), unknown) {
        (".", None) => "body".to_string(),
        (".", Some(name)) => bounded(name),
        (path, Some(name)) => bounded(&format!("{path}.{name}")),
        (path, None) => bounded(path),
    };
    let message = format!("malformed JSON at {field} ({location}): {}", bounded(text));
    Err(invalid(&field, message))
}

/// The byte offset of serde_json's `line` and `column` (1-based; column 0 before a line's
/// first byte) in `body`.
fn byte_offset(body: &[u8], line: usize, column: usize) -> usize {
    let line_start = match line {
        0 | 1 => 0,
        line => body
            .iter()
            .enumerate()
            .filter(|(_, byte)| **byte == b'\n')
            .nth(line - 2)
            .map_or(body.len(), |(index, _)| index + 1),
    };
    (line_start + column.saturating_sub(1)).min(body.len())
}

/// Decodes one message, or with `array` a JSON array of them, handing each to `each` (its
/// error text, a failure of `each`, ends the decoding).
struct Messages<'a> {
    descriptor: MessageDescriptor,
    array: bool,
    each: &'a mut dyn FnMut(DynamicMessage) -> Result<(), String>,
}

impl<'de> DeserializeSeed<'de> for Messages<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.array {
            return deserializer.deserialize_seq(self);
        }
        let message = One(&self.descriptor).deserialize(deserializer)?;
        (self.each)(message).map_err(serde::de::Error::custom)
    }
}

impl<'de> Visitor<'de> for Messages<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(formatter, "an array of {}", self.descriptor.full_name())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut sequence: A) -> Result<(), A::Error> {
        while let Some(message) = sequence.next_element_seed(One(&self.descriptor))? {
            (self.each)(message).map_err(serde::de::Error::custom)?;
        }
        Ok(())
    }
}

/// One message of `descriptor`'s type, unknown fields refused.
struct One<'a>(&'a MessageDescriptor);

impl<'de> DeserializeSeed<'de> for One<'_> {
    type Value = DynamicMessage;

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<DynamicMessage, D::Error> {
        let options = DeserializeOptions::new().deny_unknown_fields(true);
        DynamicMessage::deserialize_with_options(self.0.clone(), deserializer, &options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_offsets_follow_lines_and_columns() {
        let body = b"{\n  \"a\": 1,\n  x\n}";
        assert_eq!(byte_offset(body, 3, 3), 14);
        assert_eq!(body[14], b'x');
        assert_eq!(byte_offset(body, 1, 1), 0);
        assert_eq!(byte_offset(body, 9, 9), body.len());
    }
}
