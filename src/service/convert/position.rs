//! A query's position as the engine takes it, read from its message form (tokens, dense or
//! sparse values), and the in-band errors that name the field and index of what is wrong.

use crate::engine::VertexOutOfRange;
use crate::proto;

/// Which form a query's position took, to name fields in errors and map item indexes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PositionForm {
    Tokens,
    Dense,
    Sparse,
}

impl PositionForm {
    /// The field of the whole position, e.g. `tokens`.
    pub(crate) fn position_field(self) -> &'static str {
        match self {
            Self::Tokens => "tokens",
            Self::Dense => "dense_values",
            Self::Sparse => "sparse_values",
        }
    }

    pub(crate) fn vertex_field(self, index: usize) -> String {
        match self {
            Self::Tokens => format!("tokens.vertices[{index}]"),
            Self::Dense => format!("dense_values.values[{index}]"),
            Self::Sparse => format!("sparse_values.vertices[{index}]"),
        }
    }
}

/// A query's position as the engine takes it: `(vertex, count)` items (a token is a count of
/// 1; for dense and sparse positions, a vertex's value), and for dense positions the vertex
/// of each item (zero values are skipped, so item indexes are not vertices).
#[derive(Default)]
pub(crate) struct Position {
    pub(crate) items: Vec<(u32, u64)>,
    item_vertex: Vec<u32>,
}

impl Position {
    /// Reads the query's position into `items` (`vertex_count` checks a dense one's length).
    pub(crate) fn load(
        &mut self,
        query: &proto::Query,
        vertex_count: u32,
    ) -> Result<PositionForm, proto::QueryError> {
        use proto::query::Position as Form;
        self.items.clear();
        self.item_vertex.clear();
        match &query.position {
            None => Err(query_error(
                "position".into(),
                "a query needs a position: tokens, dense_values or sparse_values".into(),
            )),
            Some(Form::Tokens(tokens)) => {
                self.items.extend(tokens.vertices.iter().map(|&v| (v, 1)));
                Ok(PositionForm::Tokens)
            }
            Some(Form::DenseValues(dense)) => {
                if dense.values.len() != vertex_count as usize {
                    return Err(query_error(
                        "dense_values.values".into(),
                        format!(
                            "has {} entries, expected one per vertex (vertex_count {vertex_count})",
                            dense.values.len()
                        ),
                    ));
                }
                for (vertex, &value) in dense.values.iter().enumerate() {
                    if value != 0 {
                        self.items.push((vertex as u32, value));
                        self.item_vertex.push(vertex as u32);
                    }
                }
                Ok(PositionForm::Dense)
            }
            Some(Form::SparseValues(sparse)) => {
                if sparse.vertices.len() != sparse.values.len() {
                    return Err(query_error(
                        "sparse_values.values".into(),
                        format!(
                            "has {} entries but sparse_values.vertices has {}; they must pair up",
                            sparse.values.len(),
                            sparse.vertices.len()
                        ),
                    ));
                }
                self.items.extend(
                    sparse
                        .vertices
                        .iter()
                        .copied()
                        .zip(sparse.values.iter().copied()),
                );
                Ok(PositionForm::Sparse)
            }
        }
    }

    /// The index, in the query's own form, of item `item`: its vertex for a dense position
    /// (whose zero values have no item), the item itself otherwise.
    pub(crate) fn token_index(&self, form: PositionForm, item: usize) -> u32 {
        match form {
            PositionForm::Dense => self.item_vertex[item],
            _ => item as u32,
        }
    }
}

/// The error of a packed query whose token at `offset + error.index` is out of range.
pub(crate) fn packed_error(offset: usize, error: VertexOutOfRange) -> proto::QueryError {
    query_error(
        format!("packed_tokens.vertices[{}]", offset + error.index),
        error.to_string(),
    )
}

pub(crate) fn query_error(field: String, message: String) -> proto::QueryError {
    proto::QueryError { field, message }
}
