//! A JSON request made into the gRPC request of its route: the body read by the serde code
//! generated for the `grundy.v1` messages (`generated`: straight into the prost structs,
//! unknown fields refused) and encoded into the gRPC frame as it is read; then the path's
//! variables and the query parameters, set on a message of their own through the descriptors
//! and appended to the frame (protobuf merges a message's concatenated encodings).
//!
//! A client-streaming route (`PutGraph`) takes one JSON value as one message, or a JSON
//! array as a message per element, each encoded as soon as it is decoded.

use std::fmt;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use prost::Message;
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor};
use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
use tonic::Status;

use super::generated::Generated;
use super::parameters::{TIMEOUT_PARAMETER, is_set, parse_timeout, set_path};
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

    let (element, field) = body_element(route)?;
    let mut frames = Frames {
        // Protobuf is shorter than its JSON: the frames fit in the body's size.
        frames: BytesMut::with_capacity(body.len()),
        element: BytesMut::new(),
        field: field.as_ref().map(FieldDescriptor::number),
        input: &route.input,
        parameters: &variables,
        failure: None,
    };
    match &route.body {
        BodyMapping::None => {
            if !body.trim_ascii().is_empty() {
                return Err(invalid("body", format!("{} takes no body", route.method)));
            }
            let start = frames.begin();
            frames.finish(start)?;
        }
        BodyMapping::Whole | BodyMapping::Field(_) => {
            let generated = Generated::by_name(element.full_name()).ok_or_else(|| {
                Status::internal(format!("no JSON code for {}", element.full_name()))
            })?;
            let body = if body.trim_ascii().is_empty() {
                &b"{}"[..]
            } else {
                body
            };
            let array = route.client_streaming && body.trim_ascii_start().first() == Some(&b'[');
            let messages = Messages {
                generated,
                name: element.full_name(),
                array,
            };
            let decoded = decode_json(body, messages, &mut frames);
            if let Some(status) = frames.failure.take() {
                return Err(status);
            }
            decoded?;
        }
    }
    Ok(Transcoded {
        frames: frames.frames.freeze(),
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

/// Decodes `body` as `messages` into `frames`, the error naming the JSON path, line, column
/// and byte. A body is read once as it is (the common case, a good one), and a bad one again
/// with its JSON path tracked, to name where it went wrong: the same reading fails the same
/// way.
fn decode_json(body: &[u8], messages: Messages<'_>, frames: &mut Frames<'_>) -> Result<(), Status> {
    let mut json = serde_json::Deserializer::from_slice(body);
    let seed = Seed(messages, &mut *frames);
    if seed
        .deserialize(&mut json)
        .and_then(|()| json.end())
        .is_ok()
    {
        return Ok(());
    }
    frames.clear();
    let mut json = serde_json::Deserializer::from_slice(body);
    let mut track = serde_path_to_error::Track::new();
    let result = Seed(messages, frames)
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

/// The gRPC frames being written: each message's body part straight from the JSON, then its
/// parameters.
struct Frames<'a> {
    frames: BytesMut,
    /// The body's message when it is one field of the request (`body: "chunk"`).
    element: BytesMut,
    /// That field's number.
    field: Option<u32>,
    input: &'a MessageDescriptor,
    parameters: &'a [(String, String)],
    /// The error that ended the decoding, when it is no JSON error.
    failure: Option<Status>,
}

impl Frames<'_> {
    /// Forgets what was written, for a second reading of the body.
    fn clear(&mut self) {
        self.frames.clear();
        self.element.clear();
        self.failure = None;
    }

    /// Starts a message: its frame's prefix, the length left to [`Frames::finish`].
    fn begin(&mut self) -> usize {
        let start = self.frames.len();
        self.frames.put_u8(0);
        self.frames.put_u32(0);
        start
    }

    /// Where the body's message is written.
    fn body(&mut self) -> &mut BytesMut {
        match self.field {
            Some(_) => &mut self.element,
            None => &mut self.frames,
        }
    }

    /// Ends the message begun at `start`: the body's message put in its field, the parameters
    /// appended, the frame's length written.
    fn finish(&mut self, start: usize) -> Result<(), Status> {
        if let Some(number) = self.field {
            prost::encoding::encode_key(
                number,
                prost::encoding::WireType::LengthDelimited,
                &mut self.frames,
            );
            prost::encoding::encode_varint(self.element.len() as u64, &mut self.frames);
            self.frames.extend_from_slice(&self.element);
            self.element.clear();
        }
        if !self.parameters.is_empty() {
            let mut message = DynamicMessage::new(self.input.clone());
            for (path, value) in self.parameters {
                if is_set(&self.frames[start + 5..], self.input, path) {
                    let message = format!(
                        "{path} is given twice (by the URL and by the body, or twice in the URL)"
                    );
                    return Err(invalid(path, message));
                }
                set_path(&mut message, path, path, value)?;
            }
            message.encode_raw(&mut self.frames);
        }
        let length = u32::try_from(self.frames.len() - start - 5).map_err(|_| {
            Status::from(ServiceError::JsonBodyTooLarge {
                limit: u32::MAX.into(),
                size: None,
            })
        })?;
        self.frames[start + 1..start + 5].copy_from_slice(&length.to_be_bytes());
        Ok(())
    }

    /// Reads one message from `deserializer` into a frame of its own.
    fn read<'de, D: Deserializer<'de>>(
        &mut self,
        generated: Generated,
        deserializer: D,
    ) -> Result<(), D::Error> {
        let start = self.begin();
        generated.read_json(deserializer, self.body())?;
        self.finish(start).map_err(|status| {
            let text = status.message().to_string();
            self.failure = Some(status);
            serde::de::Error::custom(text)
        })
    }
}

/// What a body holds: one message, or with `array` a JSON array of them.
#[derive(Clone, Copy)]
struct Messages<'a> {
    generated: Generated,
    /// The message's full name.
    name: &'a str,
    array: bool,
}

/// Decodes a body's messages, each into its frame.
struct Seed<'a, 'b, 'c>(Messages<'a>, &'b mut Frames<'c>);

impl<'de> DeserializeSeed<'de> for Seed<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.0.array {
            return deserializer.deserialize_seq(self);
        }
        self.1.read(self.0.generated, deserializer)
    }
}

impl<'de> Visitor<'de> for Seed<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(formatter, "an array of {}", self.0.name)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut sequence: A) -> Result<(), A::Error> {
        while sequence
            .next_element_seed(One(self.0.generated, &mut *self.1))?
            .is_some()
        {}
        Ok(())
    }
}

/// One element of an array of messages.
struct One<'a, 'b>(Generated, &'a mut Frames<'b>);

impl<'de> DeserializeSeed<'de> for One<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.1.read(self.0, deserializer)
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
