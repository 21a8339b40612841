//! Path variables and query parameters of a JSON request, set on the fields they name (by
//! their proto or JSON names, dot-separated into nested messages), and the `timeout`
//! parameter, the call's deadline.

use std::time::Duration;

use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, ReflectMessage, Value,
};
use tonic::Status;

use super::status::invalid;
use crate::service::excerpt::excerpt;

/// The query parameter that sets the call's deadline (`google.protobuf.Duration` JSON, e.g.
/// `2.5s`), as the `grpc-timeout` header does; it replaces that header when both are sent.
pub(crate) const TIMEOUT_PARAMETER: &str = "timeout";

/// Sets the field at `path` (names as the proto or JSON spells them, dot-separated) of
/// `message` from the text of a path variable or query parameter. A field of a oneof whose
/// other member is set is refused, as is a field already set (the body's fields are checked
/// by [`is_set`]). Errors name `full`, the whole path.
pub(super) fn set_path(
    message: &mut DynamicMessage,
    full: &str,
    path: &str,
    text: &str,
) -> Result<(), Status> {
    let (head, rest) = match path.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (path, None),
    };
    let descriptor = message.descriptor();
    let unknown = || invalid(full, format!("unknown parameter {}", excerpt(full)));
    let field = descriptor
        .get_field_by_name(head)
        .or_else(|| descriptor.get_field_by_json_name(head))
        .ok_or_else(unknown)?;
    if let Some(rest) = rest {
        let Kind::Message(_) = field.kind() else {
            return Err(unknown());
        };
        if field.is_list() || field.is_map() {
            return Err(unknown());
        }
        let Value::Message(inner) = message.get_field_mut(&field) else {
            return Err(unknown());
        };
        return set_path(inner, full, rest, text);
    }
    if !field.is_list() {
        let taken = match field.containing_oneof() {
            Some(oneof) => oneof.fields().any(|member| message.has_field(&member)),
            None => message.has_field(&field),
        };
        if taken {
            let message =
                format!("{full} is given twice (by the URL and by the body, or twice in the URL)");
            return Err(invalid(full, message));
        }
    }
    let value = parse_value(&field, text).ok_or_else(|| {
        let kind = kind_name(&field.kind());
        invalid(full, format!("{full}: {} is no {kind}", excerpt(text)))
    })?;
    match message.get_field_mut(&field) {
        Value::List(values) if field.is_list() => values.push(value),
        slot => *slot = value,
    }
    Ok(())
}

/// True when the protobuf encoding `encoded` of a `descriptor` message sets the field at
/// `path` (as [`set_path`] names it) or another member of its oneof: a parameter may not set it
/// again. A path [`set_path`] refuses, or a repeated field (parameters add to it), is false.
pub(super) fn is_set(encoded: &[u8], descriptor: &MessageDescriptor, path: &str) -> bool {
    let (head, rest) = match path.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (path, None),
    };
    let Some(field) = descriptor
        .get_field_by_name(head)
        .or_else(|| descriptor.get_field_by_json_name(head))
    else {
        return false;
    };
    if field.is_list() || field.is_map() {
        return false;
    }
    match (rest, field.kind()) {
        // Every occurrence of the message (they merge) is looked in.
        (Some(rest), Kind::Message(inner)) => encoded_fields(encoded)
            .any(|(number, bytes)| number == field.number() && is_set(bytes, &inner, rest)),
        (Some(_), _) => false,
        (None, _) => {
            let members: Vec<u32> = match field.containing_oneof() {
                Some(oneof) => oneof.fields().map(|member| member.number()).collect(),
                None => vec![field.number()],
            };
            encoded_fields(encoded).any(|(number, _)| members.contains(&number))
        }
    }
}

/// The fields of a protobuf encoding in order: each number with its bytes when it is
/// length-delimited (empty otherwise). Stops at bytes it cannot read (groups included), which
/// prost's encoding of a message never has.
fn encoded_fields(mut encoded: &[u8]) -> impl Iterator<Item = (u32, &[u8])> {
    use prost::encoding::{WireType, decode_key, decode_varint};
    std::iter::from_fn(move || {
        if encoded.is_empty() {
            return None;
        }
        let (number, wire_type) = decode_key(&mut encoded).ok()?;
        let length = match wire_type {
            WireType::Varint => {
                decode_varint(&mut encoded).ok()?;
                0
            }
            WireType::SixtyFourBit => 8,
            WireType::ThirtyTwoBit => 4,
            WireType::LengthDelimited => usize::try_from(decode_varint(&mut encoded).ok()?).ok()?,
            WireType::StartGroup | WireType::EndGroup => return None,
        };
        let bytes = encoded.get(..length)?;
        encoded = &encoded[length..];
        let bytes = match wire_type {
            WireType::LengthDelimited => bytes,
            _ => &[],
        };
        Some((number, bytes))
    })
}

/// A scalar field's value from text.
fn parse_value(field: &FieldDescriptor, text: &str) -> Option<Value> {
    Some(match field.kind() {
        Kind::String => Value::String(text.to_string()),
        Kind::Bool => Value::Bool(match text {
            "true" => true,
            "false" => false,
            _ => return None,
        }),
        Kind::Uint32 | Kind::Fixed32 => Value::U32(text.parse().ok()?),
        Kind::Uint64 | Kind::Fixed64 => Value::U64(text.parse().ok()?),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(text.parse().ok()?),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(text.parse().ok()?),
        Kind::Enum(enumeration) => Value::EnumNumber(enumeration.get_value_by_name(text)?.number()),
        _ => return None,
    })
}

/// How a parameter's kind reads in an error.
fn kind_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::Bool => "boolean (true or false)",
        Kind::String => "string",
        Kind::Enum(_) => "value name of its enum",
        Kind::Message(_) => "scalar",
        _ => "integer in the field's range",
    }
}

/// The deadline of a `timeout` parameter: `google.protobuf.Duration` JSON, seconds with an
/// `s` suffix (`30s`, `2.5s`).
pub(super) fn parse_timeout(text: &str) -> Result<Duration, Status> {
    text.strip_suffix('s')
        .and_then(|seconds| seconds.parse::<f64>().ok())
        .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .ok_or_else(|| {
            let message = format!(
                "query parameter {TIMEOUT_PARAMETER}: {} is no duration such as 2.5s",
                excerpt(text)
            );
            invalid(TIMEOUT_PARAMETER, message)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_read_as_durations() {
        assert_eq!(parse_timeout("2.5s").unwrap(), Duration::from_millis(2500));
        for bad in ["", "2", "-1s", "NaNs", "1e400s", "0s"] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fields_the_body_set_are_found_in_its_encoding() {
        use prost::Message;

        use crate::proto::{self, evaluate_start::GraphSource};
        let pool = prost_reflect::DescriptorPool::decode(proto::FILE_DESCRIPTOR_SET).unwrap();
        let input = pool
            .get_message_by_name("grundy.v1.EvaluateBatchRequest")
            .unwrap();
        let request = |source, explain| proto::EvaluateBatchRequest {
            start: Some(proto::EvaluateStart {
                graph_source: source,
                explain,
                ..Default::default()
            }),
            queries: vec![proto::Query::default()],
        };
        let inline = request(Some(GraphSource::Graph(proto::Graph::default())), false);
        let inline = inline.encode_to_vec();
        // The other member of the oneof counts; a field at zero is unset, as in proto3.
        assert!(is_set(&inline, &input, "start.graph_id"));
        assert!(is_set(&inline, &input, "start.graphId"));
        assert!(!is_set(&inline, &input, "start.explain"));
        assert!(is_set(&inline, &input, "start"));
        // Lists take more values; unknown paths and paths through lists are not set.
        assert!(!is_set(&inline, &input, "queries"));
        assert!(!is_set(&inline, &input, "queries.id"));
        assert!(!is_set(&inline, &input, "start.nothing"));
        let bare = request(None, true).encode_to_vec();
        assert!(!is_set(&bare, &input, "start.graph_id"));
        assert!(is_set(&bare, &input, "start.explain"));
        assert!(!is_set(&[], &input, "start.graph_id"));
    }
}
