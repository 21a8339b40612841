//! A verdict response as the server sends it: a message, or verdicts already encoded by the
//! job that found them (the codec, `crate::wire`, writes either). A stream with moves or
//! position analyses hands its verdicts over as they are found (`service::answer::early`);
//! encoding them there, while the job's cache still holds them, spares the stream's thread
//! a cold pass over every verdict and move for each of its sizings and its write
//! (`grundy analyse` of quick sums: see docs/performance.md). The bytes are those prost
//! writes: `verdicts` is field 1 of `EvaluateResponse` and of `EvaluateBatchResponse` alike
//! (the codec's descriptor test checks both: `src/wire/tags.rs`).

#![warn(clippy::all, missing_docs)]

use bytes::{Buf, BufMut, Bytes};
use prost::Message;
use prost::encoding::{DecodeContext, WireType};

use super::Verdict;

/// A response of the `Evaluate` or `EvaluateBatch` stream (`M`), as the server sends it.
#[derive(Debug, Clone, PartialEq)]
pub enum Sent<M> {
    /// A message to encode.
    Message(M),
    /// Verdicts encoded already.
    Encoded(EncodedVerdicts),
}

impl<M: Default> Default for Sent<M> {
    fn default() -> Self {
        Sent::Message(M::default())
    }
}

impl<M> Sent<M> {
    /// The message, decoding encoded verdicts (for tests and for a `Sent` received).
    pub fn into_message(self) -> Result<M, prost::DecodeError>
    where
        M: Message + Default,
    {
        match self {
            Sent::Message(message) => Ok(message),
            Sent::Encoded(encoded) => M::decode(encoded.to_bytes()),
        }
    }
}

/// Full verdicts as the `verdicts` entries (field 1) of a response: each verdict's key, its
/// length and its bytes, in order. Two are equal when their bytes are, however they are
/// split into pieces.
#[derive(Debug, Clone, Default)]
pub struct EncodedVerdicts {
    /// The entries, in pieces as they were handed over.
    pieces: Vec<Bytes>,
    len: usize,
}

impl EncodedVerdicts {
    /// Appends the entry of `verdict` to `buf`.
    pub(crate) fn encode_entry(verdict: &Verdict, buf: &mut Vec<u8>) {
        prost::encoding::message::encode(1, verdict, buf);
    }

    /// Adds entries (whole ones) after those held.
    pub(crate) fn push(&mut self, entries: Bytes) {
        self.len += entries.len();
        if !entries.is_empty() {
            self.pieces.push(entries);
        }
    }

    /// The encoded size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether no verdict is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries in one piece.
    fn to_bytes(&self) -> Bytes {
        match self.pieces.as_slice() {
            [piece] => piece.clone(),
            pieces => Bytes::from(pieces.concat()),
        }
    }

    pub(crate) fn write(&self, buf: &mut impl BufMut) {
        for piece in &self.pieces {
            buf.put_slice(piece);
        }
    }
}

impl PartialEq for EncodedVerdicts {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.to_bytes() == other.to_bytes()
    }
}

impl<M: Message + Default> Message for Sent<M> {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        match self {
            Sent::Message(message) => message.encode_raw(buf),
            Sent::Encoded(encoded) => encoded.write(buf),
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        if let Sent::Encoded(encoded) = self {
            *self = Sent::Message(M::decode(encoded.to_bytes())?);
        }
        match self {
            Sent::Message(message) => message.merge_field(tag, wire_type, buf, ctx),
            Sent::Encoded(_) => unreachable!("decoded just above"),
        }
    }

    fn encoded_len(&self) -> usize {
        match self {
            Sent::Message(message) => message.encoded_len(),
            Sent::Encoded(encoded) => encoded.len(),
        }
    }

    fn clear(&mut self) {
        *self = Sent::Message(M::default());
    }
}

impl<M> From<EncodedVerdicts> for Sent<M> {
    fn from(verdicts: EncodedVerdicts) -> Self {
        Sent::Encoded(verdicts)
    }
}

impl<M: From<crate::proto::EvaluateResponse>> From<crate::proto::EvaluateResponse> for Sent<M> {
    fn from(response: crate::proto::EvaluateResponse) -> Self {
        Sent::Message(response.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{AnalysedMove, EvaluateBatchResponse, EvaluateResponse, Outcome};

    fn verdicts() -> Vec<Verdict> {
        (0..3)
            .map(|query_id| Verdict {
                query_id,
                outcome: Outcome::Win.into(),
                nim_sum: 1 << (20 * query_id),
                moves: vec![AnalysedMove::default(); query_id as usize],
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn encoded_verdicts_are_the_bytes_prost_writes_for_either_response() {
        let mut encoded = EncodedVerdicts::default();
        for (index, verdict) in verdicts().iter().enumerate() {
            let mut entry = Vec::new();
            EncodedVerdicts::encode_entry(verdict, &mut entry);
            // One piece for the first verdict, one for the others.
            if index < 2 {
                encoded.push(Bytes::from(entry));
            } else {
                let mut last = encoded.pieces.pop().unwrap().to_vec();
                encoded.len -= last.len();
                last.extend_from_slice(&entry);
                encoded.push(Bytes::from(last));
            }
        }
        let response = EvaluateResponse {
            verdicts: verdicts(),
            ..Default::default()
        };
        let sent: Sent<EvaluateResponse> = Sent::Encoded(encoded.clone());
        assert_eq!(sent.encode_to_vec(), response.encode_to_vec());
        assert_eq!(sent.encoded_len(), response.encoded_len());
        assert_eq!(sent.into_message().unwrap(), response);
        let batch: Sent<EvaluateBatchResponse> = Sent::Encoded(encoded);
        assert_eq!(batch.into_message().unwrap().verdicts, verdicts());
    }

    #[test]
    fn a_sent_message_encodes_and_decodes_as_the_message() {
        let response = EvaluateResponse {
            verdicts: verdicts(),
            ..Default::default()
        };
        let sent = Sent::Message(response.clone());
        let bytes = sent.encode_to_vec();
        assert_eq!(bytes, response.encode_to_vec());
        let decoded = Sent::<EvaluateResponse>::decode(bytes.as_slice()).unwrap();
        assert_eq!(decoded, sent);
    }
}
