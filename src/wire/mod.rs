//! The gRPC codec of `grundy.v1` (generated client and server both use it, see `build.rs`):
//! prost's encoding, with the two hot messages in their common shape (token queries in
//! `PackedTokenQueries`, verdicts in `PackedVerdicts`) written and read by hand in
//! [`packed`], which profiles showed spending most of the judge path's CPU in prost's
//! per-element varint calls and repeated sizing; `PutGraph` chunks are read by hand too
//! (`put_graph`), and so are responses of full verdicts with token moves (`verdicts`).
//! [`proto::Sent`] carries verdicts a job encoded as it found them. The bytes are the same either
//! way: any client encoding `grundy.v1` with any protobuf library talks to the server
//! unchanged.
//!
//! [`WireMessage`] is the hook: every message of the service implements it, most with the
//! plain prost defaults. [`size`] owns every protobuf size computation of the crate; the
//! field numbers the hand-written paths use are named in `tags`.

mod fields;
mod fixed32;
mod packed;
mod put_graph;
mod shuffled;
pub(crate) mod size;
mod tags;
mod varint;
mod verdicts;
mod windows;

pub(crate) use fixed32::le_bytes;

use std::marker::PhantomData;

use bytes::Buf;
use prost::Message;
use tonic::Status;
use tonic::codec::{DecodeBuf, Decoder, EncodeBuf, Encoder};

use crate::proto;

/// How a message of the service goes to and from the wire. The defaults are prost's.
pub trait WireMessage: Message + Default + Send + 'static {
    /// Writes the message into `buf` (growable, so no room check is needed).
    fn write(&self, buf: &mut EncodeBuf<'_>) {
        self.encode(buf)
            .expect("an EncodeBuf grows to fit any message");
    }

    /// The message's encoded size (what [`WireMessage::write`] writes).
    fn wire_len(&self) -> usize {
        self.encoded_len()
    }

    /// Reads one message from `buf`, which holds exactly its bytes.
    fn read(buf: &mut DecodeBuf<'_>) -> Result<Self, prost::DecodeError> {
        Self::decode(buf)
    }
}

macro_rules! prost_defaults {
    ($($message:ty),* $(,)?) => {
        $(impl WireMessage for $message {})*
    };
}

prost_defaults!(
    proto::EvaluateBatchRequest,
    proto::EvaluateBatchResponse,
    proto::PutGraphResponse,
    proto::GetValuesRequest,
    proto::GetValuesResponse,
);

impl WireMessage for proto::EvaluateRequest {
    fn write(&self, buf: &mut EncodeBuf<'_>) {
        if !packed::encode_request(self, buf) {
            self.encode(buf)
                .expect("an EncodeBuf grows to fit any message");
        }
    }

    fn wire_len(&self) -> usize {
        packed::request_len(self).unwrap_or_else(|| self.encoded_len())
    }

    fn read(buf: &mut DecodeBuf<'_>) -> Result<Self, prost::DecodeError> {
        read_with(buf, packed::decode_request)
    }
}

impl WireMessage for proto::PutGraphRequest {
    fn write(&self, buf: &mut EncodeBuf<'_>) {
        if !put_graph::encode_put_graph(self, buf) {
            self.encode(buf)
                .expect("an EncodeBuf grows to fit any message");
        }
    }

    fn wire_len(&self) -> usize {
        put_graph::put_graph_len(self).unwrap_or_else(|| self.encoded_len())
    }

    fn read(buf: &mut DecodeBuf<'_>) -> Result<Self, prost::DecodeError> {
        read_with(buf, put_graph::decode_put_graph)
    }
}

impl WireMessage for proto::EvaluateResponse {
    fn write(&self, buf: &mut EncodeBuf<'_>) {
        if !packed::encode_response(self, buf) {
            self.encode(buf)
                .expect("an EncodeBuf grows to fit any message");
        }
    }

    fn wire_len(&self) -> usize {
        packed::response_len(self).unwrap_or_else(|| self.encoded_len())
    }

    fn read(buf: &mut DecodeBuf<'_>) -> Result<Self, prost::DecodeError> {
        read_with(buf, |bytes| {
            packed::decode_response(bytes).or_else(|| verdicts::decode_response(bytes))
        })
    }
}

/// A verdict response as the server sends it: a message written as `M` is, or the bytes of
/// verdicts encoded already.
impl<M: WireMessage> WireMessage for proto::Sent<M> {
    fn write(&self, buf: &mut EncodeBuf<'_>) {
        match self {
            proto::Sent::Message(message) => message.write(buf),
            proto::Sent::Encoded(verdicts) => verdicts.write(buf),
        }
    }

    fn wire_len(&self) -> usize {
        match self {
            proto::Sent::Message(message) => message.wire_len(),
            proto::Sent::Encoded(verdicts) => verdicts.len(),
        }
    }

    fn read(buf: &mut DecodeBuf<'_>) -> Result<Self, prost::DecodeError> {
        M::read(buf).map(proto::Sent::Message)
    }
}

/// Reads a message with `fast` when the buffer is contiguous and `fast` recognises it, else
/// with prost.
fn read_with<M: Message + Default>(
    buf: &mut DecodeBuf<'_>,
    fast: fn(&[u8]) -> Option<M>,
) -> Result<M, prost::DecodeError> {
    let len = buf.remaining();
    if buf.chunk().len() == len
        && let Some(message) = fast(buf.chunk())
    {
        buf.advance(len);
        return Ok(message);
    }
    M::decode(buf)
}

/// The codec of the generated `grundy.v1` client and server: encodes `T`, decodes `U`.
#[derive(Debug)]
pub struct Codec<T, U>(PhantomData<fn(T) -> U>);

impl<T, U> Default for Codec<T, U> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<T: WireMessage, U: WireMessage> tonic::codec::Codec for Codec<T, U> {
    type Encode = T;
    type Decode = U;
    type Encoder = WireEncoder<T>;
    type Decoder = WireDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        WireEncoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        WireDecoder(PhantomData)
    }
}

/// Writes messages of type `T` (see [`WireMessage::write`]).
#[derive(Debug)]
pub struct WireEncoder<T>(PhantomData<fn(T)>);

impl<T: WireMessage> Encoder for WireEncoder<T> {
    type Item = T;
    type Error = Status;

    fn encode(&mut self, item: T, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        item.write(buf);
        Ok(())
    }
}

/// Reads messages of type `U` (see [`WireMessage::read`]).
#[derive(Debug)]
pub struct WireDecoder<U>(PhantomData<fn() -> U>);

impl<U: WireMessage> Decoder for WireDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        // INTERNAL with prost's text, as tonic's own prost codec answers (the service turns
        // it into INVALID_ARGUMENT for request bytes: `service::error`).
        U::read(buf)
            .map(Some)
            .map_err(|error| Status::internal(error.to_string()))
    }
}

#[cfg(test)]
mod tests;
