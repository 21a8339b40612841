//! The scanner's bulk read of token lists (`M v_1 .. v_M`), the hot path of a judge file's
//! queries: every number of a 64-byte window is found from the window's byte classes and
//! converted (`window_values`), so the numbers are read independently of each other rather
//! than one after the other. The lists are then walked through the values a run of ids at a
//! time: a branch per list, not per number.

use super::super::window::{Classes, WINDOW, classify};
use super::super::window_values::{MOST_NUMBERS, SPAN, WindowValues};
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

/// Ids copied at a time, whatever the list's length (the rest is overwritten or cut).
const RUN: usize = 16;

/// Fills the bytes past the end of the buffer in the last window: not a digit and not
/// whitespace, so a number running into them is not taken (its end is not known yet).
const PAST_END: u8 = 0xff;

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
        lists: Lists {
            budget,
            taken: 0,
            bytes: 0,
            consumed: from,
            kept: vertices.len(),
            count: 0,
            cost: 0,
            remaining: 0,
        },
        vertex_count,
        numbers: WindowValues::new(),
    };
    let mut tail = [0; SPAN];
    let mut base = from;
    while read.lists.taken < budget.lists && base < buffer.len() {
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
    vertices.truncate(read.lists.kept);
    (read.lists.taken, read.lists.consumed)
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

/// A bulk read in progress: the lists so far, and where a window's numbers are converted.
struct BulkRead {
    lists: Lists,
    vertex_count: u32,
    /// A window's numbers, converted one at a time.
    numbers: WindowValues,
}

/// The lists a bulk read took, and the one it is in.
struct Lists {
    budget: ListBudget,
    taken: usize,
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
    #[inline(always)]
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
        let starts = digits & !(digits << 1) & usual;
        // A number ends where a separator follows in the window: a run of digits reaching
        // the last usual byte may go on past it (and then starts the next window).
        let ends = digits & !(digits >> 1) & (usual >> 1);
        // Room for the window's ids, written in place, then cut to what was read.
        let mut pushed = vertices.len();
        vertices.resize(pushed + MOST_NUMBERS + RUN, 0);
        let (lists, numbers) = (&mut self.lists, &mut self.numbers);
        numbers.convert(span, starts, ends, self.vertex_count);
        let walked = lists.walk(numbers, base, counts, vertices, &mut pushed);
        vertices.truncate(pushed);
        // Every complete number was converted and taken: what follows is a number running
        // on past the window (the next window starts with it), or only whitespace.
        let complete = ends.count_ones();
        match walked {
            Some(taken) if taken == complete as usize => {
                if starts.count_ones() > complete {
                    Some(base + (63 - starts.leading_zeros()) as usize)
                } else {
                    (unusual == 0).then_some(base + WINDOW)
                }
            }
            _ => None,
        }
    }
}

impl Lists {
    /// Takes the window's `numbers` (at `base` in the buffer) into lists: counts to
    /// `counts`, ids to `vertices` from `pushed`. Returns how many numbers it took, or
    /// `None` when it stopped before one of them (the budget spent, or a number it cannot
    /// take: the careful path reads that one).
    #[inline(always)]
    fn walk(
        &mut self,
        numbers: &WindowValues,
        base: usize,
        counts: &mut Vec<u32>,
        vertices: &mut [u32],
        pushed: &mut usize,
    ) -> Option<usize> {
        let len = numbers.len;
        // A list's ids are taken together, run by run.
        let large = numbers.large;
        let mut k = 0;
        while k < len {
            if self.remaining == 0 {
                let value = u64::from(numbers.values[k]);
                let budget = &self.budget;
                self.cost = value
                    .saturating_mul(budget.item_bytes)
                    .saturating_add(budget.list_bytes);
                if value < budget.min_list
                    || value > budget.max_list
                    || self.bytes + self.cost > budget.bytes
                {
                    return None;
                }
                (self.count, self.remaining) = (value, value);
                k += 1;
                if value == 0 && self.list_taken(counts, numbers.end(base, k), *pushed) {
                    return None;
                }
                continue;
            }
            // The ids of the list in this window, copied RUN at a time: the room after
            // `pushed` and after `len` takes a whole last copy.
            let run = (self.remaining as usize).min(len - k);
            if large >> k & ((1 << run) - 1) != 0 {
                return None;
            }
            let mut copied = 0;
            while copied < run {
                let from = &numbers.values[k + copied..][..RUN];
                vertices[*pushed + copied..][..RUN].copy_from_slice(from);
                copied += RUN;
            }
            (k, *pushed) = (k + run, *pushed + run);
            self.remaining -= run as u64;
            if self.remaining == 0 && self.list_taken(counts, numbers.end(base, k), *pushed) {
                return None;
            }
        }
        Some(len)
    }

    /// Takes the list just completed, which ends before `consumed` in the buffer and at
    /// `kept` in the ids; true when that was the last one the budget allows.
    #[inline]
    fn list_taken(&mut self, counts: &mut Vec<u32>, consumed: usize, kept: usize) -> bool {
        counts.push(self.count as u32);
        (self.consumed, self.kept) = (consumed, kept);
        self.taken += 1;
        self.bytes += self.cost;
        self.taken == self.budget.lists
    }
}
