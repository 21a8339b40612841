//! The index of the positions a sum search visits: sorted vertex lists of one width, stored
//! end to end in one array and found through an open-addressing table of `u32` slots, so a
//! position of `k` tokens costs `4k` bytes plus at most 8 bytes of index.

/// Replaces `position[index]` by `vertex`, keeping the position sorted (one insertion step).
pub(super) fn replace_sorted(position: &mut [u32], mut index: usize, vertex: u32) {
    position[index] = vertex;
    while index + 1 < position.len() && position[index] > position[index + 1] {
        position.swap(index, index + 1);
        index += 1;
    }
    while index > 0 && position[index - 1] > position[index] {
        position.swap(index - 1, index);
        index -= 1;
    }
}

/// Positions of one width stored end to end, found through an open-addressing index.
pub(super) struct PositionSet {
    pub(super) width: usize,
    tokens: Vec<u32>,
    /// Position index + 1 per slot, 0 for an empty slot; a power of two, at most half full.
    slots: Vec<u32>,
    len: usize,
}

impl PositionSet {
    pub(super) fn new(width: usize) -> Self {
        Self {
            width,
            tokens: Vec::new(),
            slots: vec![0; 16],
            len: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn get(&self, index: u32) -> &[u32] {
        let start = index as usize * self.width;
        &self.tokens[start..start + self.width]
    }

    pub(super) fn find(&self, position: &[u32]) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut slot = hash(position) as usize & mask;
        loop {
            match self.slots[slot] {
                0 => return None,
                entry if self.get(entry - 1) == position => return Some(entry - 1),
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    /// Adds a position not yet present; returns its index.
    pub(super) fn insert(&mut self, position: &[u32]) -> u32 {
        debug_assert_eq!(position.len(), self.width);
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let index = self.len as u32;
        self.tokens.extend_from_slice(position);
        self.len += 1;
        self.place(index);
        index
    }

    fn place(&mut self, index: u32) {
        let mask = self.slots.len() - 1;
        let mut slot = hash(self.get(index)) as usize & mask;
        while self.slots[slot] != 0 {
            slot = (slot + 1) & mask;
        }
        self.slots[slot] = index + 1;
    }

    fn grow(&mut self) {
        self.slots = vec![0; self.slots.len() * 2];
        for index in 0..self.len as u32 {
            self.place(index);
        }
    }
}

/// A multiplicative hash of a position (the FxHash step): fast, and good enough for an
/// open-addressing table of sorted vertex lists.
fn hash(position: &[u32]) -> u64 {
    let mut hash = 0u64;
    for &v in position {
        hash = (hash.rotate_left(5) ^ u64::from(v)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    // The low bits pick the slot: fold the well-mixed high bits into them.
    hash ^ (hash >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_it_holds_across_growth() {
        let mut set = PositionSet::new(3);
        let positions: Vec<[u32; 3]> = (0..1000u32)
            .map(|i| [i / 100, i / 10 % 10, i % 10])
            .collect();
        for (i, position) in positions.iter().enumerate() {
            assert_eq!(set.find(position), None);
            assert_eq!(set.insert(position), i as u32);
        }
        assert_eq!(set.len(), 1000);
        for (i, position) in positions.iter().enumerate() {
            assert_eq!(set.find(position), Some(i as u32));
            assert_eq!(set.get(i as u32), position);
        }
        assert_eq!(set.find(&[10, 0, 0]), None);
    }

    #[test]
    fn the_empty_position_is_one_position() {
        let mut set = PositionSet::new(0);
        assert_eq!(set.find(&[]), None);
        assert_eq!(set.insert(&[]), 0);
        assert_eq!(set.find(&[]), Some(0));
    }

    #[test]
    fn replacing_keeps_the_order() {
        let mut position = [1, 3, 5, 7];
        replace_sorted(&mut position, 0, 6);
        assert_eq!(position, [3, 5, 6, 7]);
        replace_sorted(&mut position, 3, 0);
        assert_eq!(position, [0, 3, 5, 6]);
        replace_sorted(&mut position, 1, u32::MAX);
        assert_eq!(position, [0, 5, 6, u32::MAX]);
    }
}
