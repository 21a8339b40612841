//! Analyses out: the summary of a graph, and its per-vertex values in `GetValues` pages.

use prost::Message;

use crate::engine::{Analysis, Interrupt, PlayConvention, VertexValue, remoteness::DRAW};
use crate::proto;
use crate::wire::size;

use super::convention::one_token_outcome;

/// Summary of an analysed graph, with its id and the bytes its table holds.
pub(crate) fn graph_summary(analysis: &Analysis, graph_id: &str) -> proto::GraphSummary {
    let game = analysis.game();
    proto::GraphSummary {
        graph_id: graph_id.to_string(),
        vertex_count: game.graph().vertex_count(),
        edge_count: game.graph().edge_count(),
        cyclic: analysis.is_cyclic(),
        has_split_counts: game.split_counts().is_some(),
        max_value: analysis.max_value(),
        table_bytes: analysis.heap_bytes() as u64,
    }
}

/// The value of `vertex` (< vertex_count) as a `grundy.v1.VertexValue`: finite or ∞(K), with
/// the counter of finite vertices on cyclic graphs and the remoteness of one token there
/// under `convention` (and, under misère play, its outcome).
pub(crate) fn vertex_value(
    analysis: &Analysis,
    vertex: u32,
    convention: PlayConvention,
) -> proto::VertexValue {
    use proto::vertex_value::Value;
    // The table is ready: the pages are sent once it is (see `GetValues`).
    let cell = analysis
        .remoteness_table_as(convention, &Interrupt::new())
        .expect("nothing else holds this interrupt")
        .and_then(|table| table.get(vertex as usize).copied());
    let remoteness = cell.filter(|&r| r != DRAW);
    let outcome = cell.map_or(proto::Outcome::Unspecified, |r| {
        one_token_outcome(convention, r)
    });
    let mut value = match analysis.vertex_value(vertex) {
        Some(VertexValue::Finite(value)) => proto::VertexValue {
            value: Some(Value::Finite(value)),
            counter: analysis.loopy_table().map(|table| table.counter(vertex)),
            remoteness,
            ..Default::default()
        },
        Some(VertexValue::Infinite { finite_followers }) => proto::VertexValue {
            value: Some(Value::Infinite(proto::InfiniteValue {
                finite_followers: finite_followers.to_vec(),
            })),
            counter: None,
            remoteness,
            ..Default::default()
        },
        None => return proto::VertexValue::default(),
    };
    if convention == PlayConvention::Misere {
        value.outcome = Some(outcome.into());
    }
    value
}

/// Vertices per `GetValues` page when the request leaves it to the server.
const DEFAULT_PAGE_VERTICES: u32 = 16_384;
/// Most vertices per `GetValues` page.
const MAX_PAGE_VERTICES: u32 = 65_536;

/// The pages of values a `GetValues` request asks for, each at most `page_vertices` values
/// and at most `max_bytes` encoded (a page holds at least one value).
pub(crate) struct ValuePages<'a> {
    analysis: &'a Analysis,
    convention: PlayConvention,
    next: u32,
    end: u32,
    page_vertices: usize,
    max_bytes: usize,
}

impl<'a> ValuePages<'a> {
    /// The pages of `request` over `analysis`, each encoded in at most `max_bytes`.
    pub(crate) fn new(
        analysis: &'a Analysis,
        request: &proto::GetValuesRequest,
        convention: PlayConvention,
        max_bytes: usize,
    ) -> Self {
        let vertex_count = analysis.game().graph().vertex_count();
        let first = request.first_vertex.min(vertex_count);
        let end = match request.vertex_limit {
            0 => vertex_count,
            limit => first.saturating_add(limit).min(vertex_count),
        };
        let page_vertices = match request.page_size {
            0 => DEFAULT_PAGE_VERTICES,
            size => size.min(MAX_PAGE_VERTICES),
        } as usize;
        Self {
            analysis,
            convention,
            next: first,
            end,
            page_vertices,
            max_bytes,
        }
    }
}

impl ValuePages<'_> {
    /// True when the request asks for no vertex (its range is empty): no page at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.next >= self.end
    }
}

impl Iterator for ValuePages<'_> {
    type Item = proto::GetValuesResponse;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let first_vertex = self.next;
        let mut values = Vec::new();
        // The page's encoded size: its fixed fields plus each value with its tag and length.
        let mut bytes = proto::GetValuesResponse {
            graph: None,
            first_vertex,
            values: Vec::new(),
        }
        .encoded_len();
        while self.next < self.end && values.len() < self.page_vertices {
            let value = vertex_value(self.analysis, self.next, self.convention);
            let with_value = size::page_len_with(bytes, &value);
            if !values.is_empty() && with_value > self.max_bytes {
                break;
            }
            bytes = with_value;
            values.push(value);
            self.next += 1;
        }
        Some(proto::GetValuesResponse {
            graph: None,
            first_vertex,
            values,
        })
    }
}
