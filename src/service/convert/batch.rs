//! Query batches as a whole: walking the packed queries of one, counting its queries and
//! the table lookups answering them, and `EvaluateBatch`'s responses.

use crate::proto;

/// Each packed query: its index, the offset of its first token in `vertices`, and its tokens.
/// `token_counts` must add up to `vertices.len()`.
pub(crate) fn packed_queries(
    packed: &proto::PackedTokenQueries,
) -> impl Iterator<Item = (usize, usize, &[u32])> {
    let mut end = 0usize;
    packed
        .token_counts
        .iter()
        .enumerate()
        .map(move |(index, &token_count)| {
            let offset = end;
            end += token_count as usize;
            (index, offset, &packed.vertices[offset..end])
        })
}

/// The table lookups answering `batch` takes: one per query and one per token, value or
/// vertex of its position.
pub(crate) fn batch_lookups(batch: &proto::QueryBatch) -> u64 {
    use proto::query::Position;
    let positions: usize = batch
        .queries
        .iter()
        .map(|query| match &query.position {
            Some(Position::Tokens(tokens)) => tokens.vertices.len(),
            Some(Position::DenseValues(dense)) => dense.values.len(),
            Some(Position::SparseValues(sparse)) => sparse.vertices.len(),
            None => 0,
        })
        .sum();
    let packed = batch
        .packed_tokens
        .as_ref()
        .map_or(0, |packed| packed.vertices.len());
    batch_query_count(batch) + (positions + packed) as u64
}

/// About the memory `batch` takes decoded (its structs and arrays, not its encoded size: a
/// packed array of one-byte varints takes four times its bytes decoded).
pub(crate) fn batch_heap_bytes(batch: &proto::QueryBatch) -> usize {
    use proto::query::Position;
    let word = size_of::<u32>();
    let queries: usize = batch
        .queries
        .iter()
        .map(|query| {
            size_of::<proto::Query>()
                + match &query.position {
                    Some(Position::Tokens(tokens)) => tokens.vertices.len() * word,
                    Some(Position::DenseValues(dense)) => dense.values.len() * 2 * word,
                    Some(Position::SparseValues(sparse)) => {
                        sparse.vertices.len() * word + sparse.values.len() * 2 * word
                    }
                    None => 0,
                }
        })
        .sum();
    let packed = batch.packed_tokens.as_ref().map_or(0, |packed| {
        (packed.token_counts.len() + packed.vertices.len()) * word
    });
    queries + packed
}

pub(crate) fn batch_query_count(batch: &proto::QueryBatch) -> u64 {
    let packed = batch
        .packed_tokens
        .as_ref()
        .map_or(0, |packed| packed.token_counts.len());
    (batch.queries.len() + packed) as u64
}

/// `EvaluateBatch`'s responses are the evaluator's, without packed verdicts: its request
/// carries no packed queries, so there are none to drop.
impl From<proto::EvaluateResponse> for proto::EvaluateBatchResponse {
    fn from(response: proto::EvaluateResponse) -> Self {
        debug_assert!(response.packed_verdicts.is_none());
        Self {
            verdicts: response.verdicts,
            graph: response.graph,
        }
    }
}
