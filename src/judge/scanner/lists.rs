//! The scanner's bulk read of token lists (`M v_1 .. v_M`), the hot path of a judge file's
//! queries: every number of a 64-byte window is found from the window's byte classes, so the
//! numbers are read independently of each other rather than one after the other.

use super::super::digits::{leading_value, leading_value_short};
use super::super::window::{Classes, WINDOW, classify};
use super::Scanner;

/// How much `Scanner::read_buffered_lists` may read at once.
#[derive(Debug, Clone, Copy)]
pub struct ListBudget {
    /// Lists at most.
    pub lists: usize,
    /// Cost at most, counting `list_bytes` per list and `item_bytes` per id.
    pub bytes: u64,
    /// Cost of a list, besides its ids.
    pub list_bytes: u64,
    /// Cost of an id.
    pub item_bytes: u64,
    /// Smallest `M` read here: 1 for queries (a `0` ends the test case), 0 for adjacency
    /// lists (a vertex without moves).
    pub min_list: u64,
    /// Largest `M` read here (a longer list goes to the careful path).
    pub max_list: u64,
}

/// What a window is read from: the window and the 8 bytes after it, so that the eight-byte
/// load of a number starting anywhere in the window stays in bounds.
const SPAN: usize = WINDOW + 8;

/// Fills the bytes past the end of the buffer in the last window: not a digit and not
/// whitespace, so a number running into them is not taken (its end is not known yet).
const PAST_END: u8 = 0xff;

/// The longest number read here (two eight-byte conversions); longer ones (leading zeros,
/// or too large) go to the careful path.
const MAX_DIGITS: usize = 16;

impl<R> Scanner<R> {
    /// Reads, from what is already buffered, lists of the form `M v_1 .. v_M` (a count
    /// `budget.min_list..=budget.max_list`, then `M` vertex ids `< vertex_count`) as long as
    /// they fit in `budget`, appending each `M` to `counts` and the ids to `vertices`; returns
    /// how many it read. It stops, consuming nothing of it, before the first list it cannot
    /// take in one pass: a count out of that range, a list past the buffer's end or the
    /// budget, anything unusual. The caller reads that one with the careful, error-reporting
    /// methods.
    ///
    /// Any whitespace separates the numbers, as on the careful path. Lines are counted once,
    /// over what was consumed, after the loop.
    pub(crate) fn read_buffered_lists(
        &mut self,
        vertex_count: u32,
        budget: ListBudget,
        counts: &mut Vec<u32>,
        vertices: &mut Vec<u32>,
    ) -> usize {
        let buffer = &self.buffer[..self.len];
        let (lists, consumed) =
            read_lists(buffer, self.pos, vertex_count, budget, counts, vertices);
        self.advance_over(consumed);
        lists
    }

    /// Moves to `to` (in the buffer, from the current position), counting the lines passed.
    pub(super) fn advance_over(&mut self, to: usize) {
        let passed = &self.buffer[self.pos..to];
        let lines = line_breaks(passed);
        if lines > 0 {
            let last = passed.iter().rposition(|&byte| byte == b'\n');
            let last = last.expect("a line break was counted");
            self.line += lines;
            self.line_start = self.buffer_offset + (self.pos + last + 1) as u64;
        }
        self.pos = to;
    }
}

/// The lists of [`Scanner::read_buffered_lists`] in `buffer`, from `from`: how many it read,
/// and where the last one taken ends (`from` when none).
pub(super) fn read_lists(
    buffer: &[u8],
    from: usize,
    vertex_count: u32,
    budget: ListBudget,
    counts: &mut Vec<u32>,
    vertices: &mut Vec<u32>,
) -> (usize, usize) {
    let mut read = BulkRead {
        budget,
        max: u64::from(vertex_count),
        lists: 0,
        bytes: 0,
        consumed: from,
        kept: vertices.len(),
        count: 0,
        cost: 0,
        remaining: 0,
    };
    let mut tail = [0; SPAN];
    let mut base = from;
    while read.lists < budget.lists && base < buffer.len() {
        let span: &[u8; SPAN] = match buffer.get(base..base + SPAN) {
            Some(span) => span.try_into().expect("SPAN bytes"),
            None => {
                let rest = &buffer[base..];
                tail.fill(PAST_END);
                tail[..rest.len()].copy_from_slice(rest);
                &tail
            }
        };
        match read.window(span, base, counts, vertices) {
            Some(next) if next > base => base = next,
            // Stopped, or a number of more than a window's digits (the careful path reads
            // it).
            _ => break,
        }
    }
    vertices.truncate(read.kept);
    (read.lists, read.consumed)
}

/// How many `'\n'` bytes `bytes` has: counted in byte-wide lanes over pieces of 255 bytes,
/// which the compiler turns into vector compares and adds (a count in 64-bit lanes handled
/// two bytes a step).
fn line_breaks(bytes: &[u8]) -> u64 {
    bytes
        .chunks(255)
        .map(|piece| {
            let count = piece.iter().fold(0u8, |count, &byte| {
                count.wrapping_add(u8::from(byte == b'\n'))
            });
            u64::from(count)
        })
        .sum()
}

/// A bulk read in progress: what it took so far, and the list it is in.
struct BulkRead {
    budget: ListBudget,
    /// The vertex count: ids are below it.
    max: u64,
    lists: usize,
    /// The budget's cost of the lists taken.
    bytes: u64,
    /// Where the last list taken ends, and the length of `vertices` there.
    consumed: usize,
    kept: usize,
    /// The list being read: its count, its cost, and how many of its ids are still to come
    /// (0 between lists).
    count: u64,
    cost: u64,
    remaining: u64,
}

impl BulkRead {
    /// Reads the numbers of the window at the start of `span` (at `base` in the buffer);
    /// returns where the next window starts, or `None` to stop.
    #[inline]
    fn window(
        &mut self,
        span: &[u8; SPAN],
        base: usize,
        counts: &mut Vec<u32>,
        vertices: &mut Vec<u32>,
    ) -> Option<usize> {
        let window = span.first_chunk::<WINDOW>().expect("SPAN > WINDOW");
        let Classes { digits, spaces } = classify(window);
        let unusual = !(digits | spaces);
        // The bytes before the first unusual one (all of them when there is none): numbers
        // are taken only there, each with the separator after it.
        let usual = (unusual & unusual.wrapping_neg()).wrapping_sub(1);
        let mut starts = digits & !(digits << 1) & usual;
        // A number ends where a separator follows in the window: a run of digits reaching
        // the last usual byte may go on past it (and then starts the next window).
        let mut ends = digits & !(digits >> 1) & (usual >> 1);
        // Room for the window's ids (at most 32: each number is followed by a separator),
        // written in place, then cut to what was read.
        let mut pushed = vertices.len();
        vertices.resize(pushed + WINDOW / 2, 0);
        let next = 'window: {
            while starts != 0 {
                let start = starts.trailing_zeros() as usize;
                if ends == 0 {
                    // The number goes on past the window: the next window starts with it.
                    break 'window Some(base + start);
                }
                let end = ends.trailing_zeros() as usize;
                starts &= starts - 1;
                ends &= ends - 1;
                let Some(value) = number(span, start, end + 1 - start) else {
                    break 'window None;
                };
                if self.remaining == 0 {
                    let budget = &self.budget;
                    self.cost = value
                        .saturating_mul(budget.item_bytes)
                        .saturating_add(budget.list_bytes);
                    if value < budget.min_list
                        || value > budget.max_list
                        || self.bytes + self.cost > budget.bytes
                    {
                        break 'window None;
                    }
                    (self.count, self.remaining) = (value, value);
                    if value == 0 && self.list_taken(counts, base + end + 1, pushed) {
                        break 'window None;
                    }
                    continue;
                }
                if value >= self.max {
                    break 'window None;
                }
                vertices[pushed] = value as u32;
                pushed += 1;
                self.remaining -= 1;
                if self.remaining == 0 && self.list_taken(counts, base + end + 1, pushed) {
                    break 'window None;
                }
            }
            // Past the last number, only whitespace may be left to the next window.
            (unusual == 0).then_some(base + WINDOW)
        };
        vertices.truncate(pushed);
        next
    }
}

impl BulkRead {
    /// Takes the list just completed, which ends before `consumed` in the buffer and at
    /// `kept` in the ids; true when that was the last one the budget allows.
    #[inline]
    fn list_taken(&mut self, counts: &mut Vec<u32>, consumed: usize, kept: usize) -> bool {
        counts.push(self.count as u32);
        (self.consumed, self.kept) = (consumed, kept);
        self.lists += 1;
        self.bytes += self.cost;
        self.lists == self.budget.lists
    }
}

/// The value of the `digits` decimal digits at `start` of `span` (`start + digits <= WINDOW`),
/// or `None` past [`MAX_DIGITS`].
#[inline]
fn number(span: &[u8; SPAN], start: usize, digits: usize) -> Option<u64> {
    let word = |at: usize| {
        let bytes = span[at..].first_chunk::<8>().expect("inside the span");
        u64::from_le_bytes(*bytes)
    };
    if digits <= 4 {
        let bytes = span[start..].first_chunk::<4>().expect("inside the span");
        Some(leading_value_short(u32::from_le_bytes(*bytes), digits))
    } else if digits <= 8 {
        Some(leading_value(word(start), digits))
    } else if digits <= MAX_DIGITS {
        let high = leading_value(word(start), digits - 8);
        let low = leading_value(word(start + digits - 8), 8);
        Some(high * 100_000_000 + low)
    } else {
        None
    }
}
