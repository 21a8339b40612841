//! Pictures of a game graph: SVG drawn by grundy itself, and DOT for Graphviz users.
//!
//! Pure code, like the engine: no async, no gRPC. The caller brings the graph, the value of
//! every vertex (a nimber, or `∞(K)` on a cyclic graph) and optionally a position (tokens, or
//! a value per vertex for the Addition-Subtraction game) and a move to highlight; the module
//! colours each vertex by the outcome of a single token there and writes the picture.
//!
//! - this module: the entry points, [`Drawing::to_svg`] and [`Drawing::to_dot`];
//! - `drawing`: the input ([`Drawing`]), its validation and the size limit;
//! - [`palette`]: the colours and the names of the outcomes;
//! - `layout`: layered layout (cycle breaking, longest-path layers, barycentric ordering);
//! - `svg`: the SVG writer (vertices, edges, tokens, highlighted move, legend);
//! - `dot`: the DOT writer.

mod dot;
mod drawing;
mod layout;
pub mod palette;
mod svg;

pub use drawing::{Drawing, Highlight, MAX_SVG_EDGES, MAX_SVG_VERTICES, RenderError, Value};

impl Drawing {
    /// The picture as a standalone SVG document. Fails on invalid input and on graphs over
    /// [`MAX_SVG_VERTICES`] vertices or [`MAX_SVG_EDGES`] edges.
    pub fn to_svg(&self) -> Result<String, RenderError> {
        self.validate()?;
        let vertices = self.graph.vertex_count();
        let edges = self.graph.edge_count();
        if vertices > MAX_SVG_VERTICES || edges > MAX_SVG_EDGES {
            return Err(RenderError::TooLarge { vertices, edges });
        }
        Ok(svg::write(self))
    }

    /// The picture as a Graphviz DOT document (any size).
    pub fn to_dot(&self) -> Result<String, RenderError> {
        self.validate()?;
        Ok(dot::write(self))
    }
}

#[cfg(test)]
mod tests;
