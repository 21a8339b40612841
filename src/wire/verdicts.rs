//! An `EvaluateResponse` of full verdicts with token moves, read by hand: the shape of most
//! responses of a stream with moves or position analyses on token sliding (`grundy analyse`).
//! prost reads each field, of each verdict and of each of its moves, through a call that
//! reads its key and another that reads its value; that took a sixth of the CPU of
//! `grundy analyse` of quick sums (see docs/performance.md). Here a verdict is read in one
//! loop over its fields.
//!
//! As in [`super::packed`], a message is read exactly as prost reads it, and anything this
//! file does not recognise (a query error, a split move, a field met twice where prost would
//! merge, an unknown field, a long varint) sends the whole message to prost. Every message
//! is built with its fields named exhaustively (no `..`).

use super::fields::{Field, Fields};
use super::size::{LEN, VARINT, key};
use super::tags::{analysed_move, evaluate_response, move_, verdict as verdict_tag};
use crate::proto::{AnalysedMove, EvaluateResponse, Move, TokenMove, Verdict, r#move::Kind};

/// Reads an `EvaluateResponse` that carries only full verdicts of the shape above; `None`
/// for anything else.
pub(super) fn decode_response(bytes: &[u8]) -> Option<EvaluateResponse> {
    let mut verdicts = Vec::new();
    let mut fields = Fields(bytes);
    while let Some(field) = fields.next_field() {
        match field? {
            Field::Bytes(k, bytes) if k == key(evaluate_response::VERDICTS, LEN) => {
                verdicts.push(decode_verdict(bytes)?);
            }
            _ => return None,
        }
    }
    // An empty message is prost's too (the end of an empty batch).
    (!verdicts.is_empty()).then_some(EvaluateResponse {
        verdicts,
        graph: None,
        packed_verdicts: None,
    })
}

fn decode_verdict(bytes: &[u8]) -> Option<Verdict> {
    use verdict_tag::*;
    let (mut query_id, mut outcome, mut nim_sum, mut best_move) = (0, 0, 0, None);
    let (mut remoteness, mut remoteness_unknown) = (None, 0);
    let (mut moves, mut moves_omitted) = (Vec::new(), 0);
    let mut fields = Fields(bytes);
    while let Some(field) = fields.next_field() {
        // Scalars: the last one read counts, as in prost; messages met twice go to prost,
        // which would merge them.
        match field? {
            Field::Varint(k, value) if k == key(QUERY_ID, VARINT) => query_id = value,
            Field::Varint(k, value) if k == key(OUTCOME, VARINT) => outcome = value as i32,
            Field::Varint(k, value) if k == key(NIM_SUM, VARINT) => nim_sum = value,
            Field::Bytes(k, bytes) if k == key(BEST_MOVE, LEN) && best_move.is_none() => {
                best_move = Some(decode_move(bytes)?);
            }
            Field::Varint(k, value) if k == key(REMOTENESS, VARINT) => {
                remoteness = Some(value as u32);
            }
            Field::Varint(k, value) if k == key(REMOTENESS_UNKNOWN, VARINT) => {
                remoteness_unknown = value as i32;
            }
            Field::Bytes(k, bytes) if k == key(MOVES, LEN) => moves.push(decode_analysed(bytes)?),
            Field::Varint(k, value) if k == key(MOVES_OMITTED, VARINT) => moves_omitted = value,
            _ => return None,
        }
    }
    Some(Verdict {
        query_id,
        outcome,
        nim_sum,
        error: None,
        best_move,
        remoteness,
        remoteness_unknown,
        moves,
        moves_omitted,
    })
}

fn decode_analysed(bytes: &[u8]) -> Option<AnalysedMove> {
    use analysed_move::*;
    let (mut move_, mut outcome, mut remoteness, mut over_budget) = (None, 0, None, false);
    let mut fields = Fields(bytes);
    while let Some(field) = fields.next_field() {
        match field? {
            Field::Bytes(k, bytes) if k == key(MOVE, LEN) && move_.is_none() => {
                move_ = Some(decode_move(bytes)?);
            }
            Field::Varint(k, value) if k == key(OUTCOME, VARINT) => outcome = value as i32,
            Field::Varint(k, value) if k == key(REMOTENESS, VARINT) => {
                remoteness = Some(value as u32);
            }
            Field::Varint(k, value) if k == key(OVER_BUDGET, VARINT) => over_budget = value != 0,
            _ => return None,
        }
    }
    Some(AnalysedMove {
        r#move: move_,
        outcome,
        remoteness,
        over_budget,
    })
}

/// A `Move` of kind `token` (the only field); `None` for a split move or anything else.
fn decode_move(bytes: &[u8]) -> Option<Move> {
    use move_::*;
    let token = Fields(bytes).only(key(TOKEN, LEN))?;
    let (mut token_index, mut source_vertex, mut target_vertex) = (0, 0, 0);
    let mut fields = Fields(token);
    while let Some(field) = fields.next_field() {
        match field? {
            Field::Varint(k, value) if k == key(TOKEN_INDEX, VARINT) => token_index = value as u32,
            Field::Varint(k, value) if k == key(SOURCE_VERTEX, VARINT) => {
                source_vertex = value as u32;
            }
            Field::Varint(k, value) if k == key(TARGET_VERTEX, VARINT) => {
                target_vertex = value as u32;
            }
            _ => return None,
        }
    }
    Some(Move {
        kind: Some(Kind::Token(TokenMove {
            token_index,
            source_vertex,
            target_vertex,
        })),
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use prost::Message;

    use super::*;
    use crate::proto::{QueryError, SplitMove};

    fn token_move() -> impl Strategy<Value = Move> {
        (any::<u32>(), any::<u32>(), any::<u32>()).prop_map(|(token_index, source, target)| Move {
            kind: Some(Kind::Token(TokenMove {
                token_index: token_index % 3,
                source_vertex: source,
                target_vertex: target >> (target % 32),
            })),
        })
    }

    fn analysed() -> impl Strategy<Value = AnalysedMove> {
        (
            proptest::option::of(token_move()),
            0..4i32,
            proptest::option::of(any::<u32>()),
            any::<bool>(),
        )
            .prop_map(|(r#move, outcome, remoteness, over_budget)| AnalysedMove {
                r#move,
                outcome,
                remoteness,
                over_budget,
            })
    }

    fn verdict() -> impl Strategy<Value = Verdict> {
        (
            any::<u64>(),
            0..4i32,
            any::<u64>(),
            proptest::option::of(token_move()),
            proptest::option::of(any::<u32>()),
            0..3i32,
            proptest::collection::vec(analysed(), 0..6),
            any::<u64>(),
        )
            .prop_map(
                |(query_id, outcome, nim_sum, best_move, remoteness, unknown, moves, omitted)| {
                    Verdict {
                        query_id: query_id >> (query_id % 64),
                        outcome,
                        nim_sum: nim_sum >> (nim_sum % 64),
                        error: None,
                        best_move,
                        remoteness,
                        remoteness_unknown: unknown,
                        moves,
                        moves_omitted: omitted % 1000,
                    }
                },
            )
    }

    /// What this file reads of `bytes`, checked against prost: the same message, or prost's.
    fn read_as_prost(bytes: &[u8]) -> Option<EvaluateResponse> {
        let by_hand = decode_response(bytes);
        if let Some(by_hand) = &by_hand {
            assert_eq!(Ok(by_hand), EvaluateResponse::decode(bytes).as_ref());
        }
        by_hand
    }

    proptest! {
        #[test]
        fn full_verdicts_read_by_hand_are_what_prost_reads(
            verdicts in proptest::collection::vec(verdict(), 1..8),
        ) {
            let response = EvaluateResponse { verdicts, graph: None, packed_verdicts: None };
            let bytes = response.encode_to_vec();
            // Long varints (values of 2^63 and more) go to prost; the rest is read here.
            let long = |v: u64| v >= 1 << 63;
            let expect_by_hand = !response
                .verdicts
                .iter()
                .any(|v| long(v.query_id) || long(v.nim_sum));
            prop_assert_eq!(read_as_prost(&bytes).is_some(), expect_by_hand);
        }

        #[test]
        fn any_bytes_read_by_hand_are_read_as_prost_reads_them(
            bytes in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            read_as_prost(&bytes);
        }
    }

    #[test]
    fn what_the_hand_reader_does_not_know_goes_to_prost() {
        let plain = Verdict {
            query_id: 1,
            ..Default::default()
        };
        let with = |change: fn(&mut Verdict)| {
            let mut verdict = plain.clone();
            change(&mut verdict);
            EvaluateResponse {
                verdicts: vec![plain.clone(), verdict],
                ..Default::default()
            }
            .encode_to_vec()
        };
        assert!(read_as_prost(&with(|_| {})).is_some());
        let unknown: [fn(&mut Verdict); 2] = [
            |v| {
                v.error = Some(QueryError {
                    field: "queries[1]".into(),
                    message: "bad".into(),
                })
            },
            |v| {
                v.best_move = Some(Move {
                    kind: Some(Kind::Split(SplitMove {
                        vertex: 1,
                        odd_targets: vec![2, 3],
                        pair_target: 0,
                        pair_count: 0,
                    })),
                })
            },
        ];
        for change in unknown {
            assert!(read_as_prost(&with(change)).is_none());
        }
        // A verdict with its best move twice (two encodings one after the other, which
        // prost merges): prost's.
        let mut merged = Verdict {
            best_move: token_move_of(1),
            ..Default::default()
        }
        .encode_to_vec();
        merged.extend(
            Verdict {
                best_move: token_move_of(2),
                ..Default::default()
            }
            .encode_to_vec(),
        );
        let mut response = Vec::new();
        prost::encoding::bytes::encode(1, &merged, &mut response);
        assert!(read_as_prost(&response).is_none());
    }

    /// Bytes prost never writes, read as prost reads them: values over a `uint32` or an
    /// enum (truncated), a scalar twice (the last counts), a default written out, moves
    /// apart from each other; and an empty move and an overlong varint, left to prost.
    #[test]
    fn bytes_prost_never_writes_are_read_as_prost_reads_them() {
        use prost::encoding::{bytes, uint64};
        let mut token = Vec::new();
        uint64::encode(2, &(1 << 40 | 7), &mut token);
        uint64::encode(3, &5, &mut token);
        uint64::encode(3, &6, &mut token);
        let mut move_ = Vec::new();
        bytes::encode(1, &token, &mut move_);
        let mut analysed = Vec::new();
        bytes::encode(1, &move_, &mut analysed);
        uint64::encode(2, &(1 << 33 | 1), &mut analysed);
        uint64::encode(4, &2, &mut analysed);
        let mut verdict = Vec::new();
        uint64::encode(1, &3, &mut verdict);
        bytes::encode(8, &analysed, &mut verdict);
        uint64::encode(2, &(1 << 33 | 2), &mut verdict);
        uint64::encode(1, &4, &mut verdict);
        uint64::encode(9, &0, &mut verdict);
        bytes::encode(8, &analysed, &mut verdict);
        uint64::encode(6, &(1 << 35 | 9), &mut verdict);
        let mut response = Vec::new();
        bytes::encode(1, &verdict, &mut response);
        let read = read_as_prost(&response).expect("read by hand");
        let verdict = &read.verdicts[0];
        assert_eq!((verdict.query_id, verdict.outcome), (4, 2));
        assert_eq!((verdict.remoteness, verdict.moves.len()), (Some(9), 2));
        assert_eq!(
            verdict.moves[1].r#move,
            token_move_of(6).map(|mut m| {
                if let Some(Kind::Token(token)) = &mut m.kind {
                    token.source_vertex = 7;
                }
                m
            })
        );
        assert!(verdict.moves[0].over_budget);
        // An empty move, and a nim-sum in a varint of ten bytes (zeros padded): prost's.
        let mut empty_move = Vec::new();
        bytes::encode(5, &Vec::<u8>::new(), &mut empty_move);
        let mut long = vec![3 << 3];
        long.extend([0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
        for verdict in [empty_move, long] {
            let mut response = Vec::new();
            bytes::encode(1, &verdict, &mut response);
            assert!(EvaluateResponse::decode(response.as_slice()).is_ok());
            assert!(read_as_prost(&response).is_none());
        }
    }

    fn token_move_of(target_vertex: u32) -> Option<Move> {
        Some(Move {
            kind: Some(Kind::Token(TokenMove {
                token_index: 0,
                source_vertex: 0,
                target_vertex,
            })),
        })
    }
}
