//! The readers and writers of single values that the generated JSON code (`generated.rs`)
//! calls per field: the proto3 JSON mapping of each scalar kind with prost-reflect's rules
//! and error texts (the routes' behaviour is the one documented in docs/api.md), `null` as an
//! unset field, lists, messages, 64-bit integers written as strings and enums by name.

use std::fmt;
use std::marker::PhantomData;

use bytes::BytesMut;
use serde::de::{DeserializeSeed, Deserializer, Error, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

/// A field's value, or `None` for `null` (the field left as it is).
#[derive(Clone, Copy)]
pub(super) struct Nullable<S>(pub(super) S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Nullable<S> {
    type Value = Option<S::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for Nullable<S> {
    type Value = Option<S::Value>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("option")
    }

    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(deserializer).map(Some)
    }
}

/// A repeated field: a JSON array of `S`'s values.
#[derive(Clone, Copy)]
pub(super) struct List<S>(pub(super) S);

impl<'de, S: DeserializeSeed<'de> + Copy> DeserializeSeed<'de> for List<S> {
    type Value = Vec<S::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, S: DeserializeSeed<'de> + Copy> Visitor<'de> for List<S> {
    type Value = Vec<S::Value>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut sequence: A) -> Result<Self::Value, A::Error> {
        let mut values = Vec::with_capacity(sequence.size_hint().unwrap_or(0));
        while let Some(value) = sequence.next_element_seed(self.0)? {
            values.push(value);
        }
        Ok(values)
    }
}

/// A message field, read by the message's generated `Deserialize`.
pub(super) struct Message<M>(PhantomData<fn() -> M>);

impl<M> Message<M> {
    pub(super) const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<M> Clone for Message<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for Message<M> {}

impl<'de, M: Deserialize<'de>> DeserializeSeed<'de> for Message<M> {
    type Value = M;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<M, D::Error> {
        M::deserialize(deserializer)
    }
}

/// An enum field: its value's name, or its number.
#[derive(Clone, Copy)]
pub(super) struct EnumSeed(pub(super) fn(&str) -> Option<i32>);

impl<'de> DeserializeSeed<'de> for EnumSeed {
    type Value = i32;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<i32, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Visitor<'_> for EnumSeed {
    type Value = i32;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string or integer")
    }

    fn visit_str<E: Error>(self, name: &str) -> Result<i32, E> {
        (self.0)(name).ok_or_else(|| E::custom(format!("unrecognized enum value '{name}'")))
    }

    fn visit_i32<E: Error>(self, number: i32) -> Result<i32, E> {
        Ok(number)
    }

    fn visit_i64<E: Error>(self, number: i64) -> Result<i32, E> {
        number.try_into().map_err(E::custom)
    }

    fn visit_u64<E: Error>(self, number: u64) -> Result<i32, E> {
        number.try_into().map_err(E::custom)
    }
}

/// Integer seeds: a JSON number (an integral float too) or a decimal string.
macro_rules! integer_seed {
    ($name:ident, $type:ty, $expecting:literal) => {
        // Each kind whether or not the proto has a field of it now.
        #[allow(dead_code)]
        #[derive(Clone, Copy)]
        pub(super) struct $name;

        impl<'de> DeserializeSeed<'de> for $name {
            type Value = $type;

            fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<$type, D::Error> {
                deserializer.deserialize_any(self)
            }
        }

        impl Visitor<'_> for $name {
            type Value = $type;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str($expecting)
            }

            fn visit_str<E: Error>(self, text: &str) -> Result<$type, E> {
                text.parse().map_err(E::custom)
            }

            #[allow(clippy::useless_conversion)]
            fn visit_i64<E: Error>(self, number: i64) -> Result<$type, E> {
                number.try_into().map_err(E::custom)
            }

            #[allow(clippy::useless_conversion)]
            fn visit_u64<E: Error>(self, number: u64) -> Result<$type, E> {
                number.try_into().map_err(E::custom)
            }

            fn visit_f64<E: Error>(self, number: f64) -> Result<$type, E> {
                if number.fract() != 0.0 {
                    return Err(E::custom("expected integer value"));
                }
                if number < (<$type>::MIN as f64) || number > (<$type>::MAX as f64) {
                    return Err(E::custom("float value out of range"));
                }
                Ok(number as $type)
            }
        }
    };
}

integer_seed!(U32, u32, "a 32-bit unsigned integer or decimal string");
integer_seed!(I32, i32, "a 32-bit signed integer");
integer_seed!(U64, u64, "a 64-bit unsigned integer or decimal string");
integer_seed!(I64, i64, "a 64-bit signed integer or decimal string");

/// A `bool` field: `true` or `false` only.
#[derive(Clone, Copy)]
pub(super) struct Bool;

impl<'de> DeserializeSeed<'de> for Bool {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Visitor<'_> for Bool {
    type Value = bool;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a boolean")
    }

    fn visit_bool<E: Error>(self, value: bool) -> Result<bool, E> {
        Ok(value)
    }
}

/// A `string` field.
#[derive(Clone, Copy)]
pub(super) struct Text;

impl<'de> DeserializeSeed<'de> for Text {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_string(self)
    }
}

impl Visitor<'_> for Text {
    type Value = String;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string")
    }

    fn visit_str<E: Error>(self, text: &str) -> Result<String, E> {
        Ok(text.to_owned())
    }

    fn visit_string<E: Error>(self, text: String) -> Result<String, E> {
        Ok(text)
    }
}

/// A 64-bit integer written as a JSON string.
pub(super) struct Decimal<T>(pub(super) T);

impl<T: itoa::Integer + Copy> Serialize for Decimal<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(itoa::Buffer::new().format(self.0))
    }
}

/// A repeated 64-bit integer field, each a JSON string.
pub(super) struct Decimals<'a, T>(pub(super) &'a [T]);

impl<T: itoa::Integer + Copy> Serialize for Decimals<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut list = serializer.serialize_seq(Some(self.0.len()))?;
        for value in self.0 {
            list.serialize_element(&Decimal(*value))?;
        }
        list.end()
    }
}

/// An enum value by name, or by number when the enum has no such value.
pub(super) struct EnumName(pub(super) i32, pub(super) fn(i32) -> Option<&'static str>);

impl Serialize for EnumName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match (self.1)(self.0) {
            Some(name) => serializer.serialize_str(name),
            None => serializer.serialize_i32(self.0),
        }
    }
}

/// A repeated enum field.
pub(super) struct EnumNames<'a>(
    pub(super) &'a [i32],
    pub(super) fn(i32) -> Option<&'static str>,
);

impl Serialize for EnumNames<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut list = serializer.serialize_seq(Some(self.0.len()))?;
        for value in self.0 {
            list.serialize_element(&EnumName(*value, self.1))?;
        }
        list.end()
    }
}

/// A response message that would not decode or be written (a server bug).
#[derive(Debug)]
pub(crate) struct WriteError;

impl From<prost::DecodeError> for WriteError {
    fn from(_: prost::DecodeError) -> Self {
        Self
    }
}

impl From<serde_json::Error> for WriteError {
    fn from(_: serde_json::Error) -> Self {
        Self
    }
}

/// Appends `message`'s protobuf encoding to `out`.
pub(super) fn encode<M: prost::Message>(message: &M, out: &mut BytesMut) {
    message.encode_raw(out);
}

/// Appends `message` in JSON to `out`.
pub(super) fn write<M: Serialize>(message: &M, out: &mut Vec<u8>) -> Result<(), WriteError> {
    serde_json::to_writer(out, message)?;
    Ok(())
}
