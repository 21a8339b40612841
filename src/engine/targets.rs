//! A graph's targets received in pieces (the chunks of an upload), each piece checked against
//! the vertex count as it is appended, while it is still in cache. A graph built from them
//! ([`super::Digraph::from_checked_targets`]) needs no pass of its own over its targets: on a
//! graph of 10^8 edges that pass took 80-100 ms after the upload's last chunk had come, about a
//! tenth of the whole upload.

use super::graph_error::GraphError;
use super::huge_pages;

/// The targets of a graph of `vertex_count` vertices, every one of them below it.
#[derive(Debug, Default)]
pub struct CheckedTargets {
    vertex_count: u32,
    targets: Vec<u32>,
}

impl CheckedTargets {
    /// No targets yet, with room for `capacity` of them (advised for huge pages, for the
    /// analysis's random reads, before it is filled).
    pub fn with_capacity(vertex_count: u32, capacity: usize) -> Self {
        Self {
            vertex_count,
            targets: huge_pages::with_capacity(capacity),
        }
    }

    /// The vertex count the targets are checked against.
    pub fn vertex_count(&self) -> u32 {
        self.vertex_count
    }

    /// Targets appended so far.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Whether no target was appended.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Targets the room holds before it grows.
    pub fn capacity(&self) -> usize {
        self.targets.capacity()
    }

    /// Appends `piece`, or refuses it whole when a target in it names no vertex (the error
    /// counts its index from the first target appended). Room that grows is advised for huge
    /// pages again.
    pub fn append(&mut self, piece: &[u32]) -> Result<(), GraphError> {
        if let Some(at) = first_out_of_range(self.vertex_count, piece) {
            return Err(GraphError::TargetOutOfRange {
                index: self.targets.len() + at,
                target: piece[at],
                vertex_count: self.vertex_count,
            });
        }
        let capacity = self.targets.capacity();
        self.targets.extend_from_slice(piece);
        if self.targets.capacity() != capacity {
            huge_pages::advise(&self.targets);
        }
        Ok(())
    }

    /// Gives back spare room (a graph's arrays are accounted at their capacity).
    pub fn shrink_to_fit(&mut self) {
        self.targets.shrink_to_fit();
    }

    /// The targets, handed over without a copy.
    pub(super) fn into_vec(self) -> Vec<u32> {
        self.targets
    }
}

/// The index of the first of `targets` that is not below `vertex_count`. One branch-free max
/// over the array first; the culprit is looked for only when there is one.
pub(super) fn first_out_of_range(vertex_count: u32, targets: &[u32]) -> Option<usize> {
    if targets
        .iter()
        .copied()
        .max()
        .is_none_or(|max| max < vertex_count)
    {
        return None;
    }
    targets.iter().position(|&target| target >= vertex_count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_appended_and_a_target_out_of_range_is_refused_with_its_index() {
        let mut targets = CheckedTargets::with_capacity(3, 2);
        targets.append(&[0, 2]).unwrap();
        targets.append(&[]).unwrap();
        targets.append(&[1, 1, 0]).unwrap();
        assert_eq!(targets.len(), 5);
        assert_eq!(
            targets.append(&[2, 0, 3, 7]),
            Err(GraphError::TargetOutOfRange {
                index: 7,
                target: 3,
                vertex_count: 3
            })
        );
        // The refused piece left nothing behind.
        assert_eq!(targets.len(), 5);
        assert_eq!(targets.into_vec(), vec![0, 2, 1, 1, 0]);
    }

    #[test]
    fn without_vertices_no_target_is_in_range() {
        let mut targets = CheckedTargets::default();
        assert!(targets.append(&[0]).is_err());
        assert!(targets.is_empty());
    }
}
