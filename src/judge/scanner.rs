//! A streaming reader of whitespace-separated unsigned numbers that knows the line and column
//! of everything it reads. It holds one 256 KiB buffer, never the whole input.

use std::io::{self, Read};

/// A place in the input: 1-based line and byte column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// 1-based line number.
    pub line: u64,
    /// 1-based byte offset in the line.
    pub column: u64,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Why judge input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// The input is malformed at `location`.
    #[error("{location}: {message}")]
    Syntax {
        /// Where: the offending byte, or the end of input.
        location: Location,
        /// What was expected or what is wrong.
        message: String,
    },
    /// Reading failed (not the input's fault).
    #[error("cannot read input: {0}")]
    Io(#[from] io::Error),
}

impl JudgeError {
    /// A [`JudgeError::Syntax`] at `location`.
    pub(crate) fn syntax(location: Location, message: impl Into<String>) -> Self {
        Self::Syntax {
            location,
            message: message.into(),
        }
    }
}

/// How much [`Scanner::read_buffered_lists`] may read at once.
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
    /// Largest `M` read here (a longer list goes to the careful path).
    pub max_list: u64,
}

/// Streaming number scanner.
pub(crate) struct Scanner<R> {
    reader: R,
    buffer: Box<[u8]>,
    pos: usize,
    len: usize,
    /// Current line (1-based) and the absolute byte offset where it starts.
    line: u64,
    line_start: u64,
    /// Absolute byte offset of `buffer[0]`.
    buffer_offset: u64,
    eof: bool,
}

/// Large enough that a refill (where the CLI sends its pending queries, see
/// [`Scanner::has_buffered_input`]) comes after thousands of queries of a file.
const BUFFER_BYTES: usize = 256 * 1024;

impl<R: Read> Scanner<R> {
    /// A scanner at the start of `reader`.
    pub(crate) fn new(reader: R) -> Self {
        Self::with_buffer_bytes(reader, BUFFER_BYTES)
    }

    /// A scanner with a buffer of `bytes` (tests use small ones, to cross buffer boundaries).
    pub(crate) fn with_buffer_bytes(reader: R, bytes: usize) -> Self {
        Self {
            reader,
            buffer: vec![0; bytes.max(1)].into_boxed_slice(),
            pos: 0,
            len: 0,
            line: 1,
            line_start: 0,
            buffer_offset: 0,
            eof: false,
        }
    }

    /// Where the next unread byte is.
    pub(crate) fn location(&self) -> Location {
        let offset = self.buffer_offset + self.pos as u64;
        Location {
            line: self.line,
            column: offset - self.line_start + 1,
        }
    }

    /// Refills the buffer; false at end of input.
    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        self.buffer_offset += self.len as u64;
        self.pos = 0;
        self.len = 0;
        loop {
            match self.reader.read(&mut self.buffer) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.len = n;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Skips the buffered whitespace; true if a non-whitespace byte follows in the buffer.
    #[inline]
    fn skip_buffered_whitespace(&mut self) -> bool {
        while self.pos < self.len {
            match self.buffer[self.pos] {
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.buffer_offset + self.pos as u64;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                _ => return true,
            }
        }
        false
    }

    /// Skips whitespace; false at end of input.
    #[inline]
    fn skip_whitespace(&mut self) -> io::Result<bool> {
        loop {
            if self.skip_buffered_whitespace() {
                return Ok(true);
            }
            if !self.fill()? {
                return Ok(false);
            }
        }
    }

    /// Whether the next number (or the end of the input) is already known without reading:
    /// skips buffered whitespace, then tells whether anything is left in the buffer. When it
    /// says false, the next read may block (a pipe whose writer waits for answers), so a
    /// caller holding work for what came before should hand it on first.
    pub(crate) fn has_buffered_input(&mut self) -> bool {
        self.skip_buffered_whitespace() || self.eof
    }

    /// Reads the next number, or `None` at end of input. `what` describes the expected
    /// number for error messages ("the number of vertices N").
    #[inline]
    pub(crate) fn next_number(
        &mut self,
        what: &str,
    ) -> Result<Option<(u64, Location)>, JudgeError> {
        if !self.skip_whitespace()? {
            return Ok(None);
        }
        let start = self.location();
        // Fast path; everything else (a number split across buffers, overflow, a bad
        // character) takes the careful loop below.
        if let Some((value, digits)) = short_number(&self.buffer[self.pos..self.len]) {
            self.pos += digits;
            return Ok(Some((value, start)));
        }
        let first = self.buffer[self.pos];
        if !first.is_ascii_digit() {
            return Err(JudgeError::syntax(
                start,
                format!("expected {what}, found {}", describe_byte(first)),
            ));
        }
        let mut value: u64 = 0;
        loop {
            while self.pos < self.len {
                let byte = self.buffer[self.pos];
                if !byte.is_ascii_digit() {
                    if is_separator(byte) {
                        return Ok(Some((value, start)));
                    }
                    return Err(JudgeError::syntax(
                        self.location(),
                        format!(
                            "expected {what}, found {} inside a number",
                            describe_byte(byte)
                        ),
                    ));
                }
                value = value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(byte - b'0')))
                    .ok_or_else(|| {
                        JudgeError::syntax(start, format!("{what} does not fit in 64 bits"))
                    })?;
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(Some((value, start)));
            }
        }
    }

    /// Reads a number that must be there.
    pub(crate) fn number(&mut self, what: &str) -> Result<(u64, Location), JudgeError> {
        match self.next_number(what)? {
            Some(found) => Ok(found),
            None => Err(JudgeError::syntax(
                self.location(),
                format!("expected {what}, found end of input"),
            )),
        }
    }

    /// Reads `count` vertex ids `< vertex_count`, handing each to `push`.
    pub(crate) fn read_vertices(
        &mut self,
        count: u64,
        vertex_count: u32,
        what: &str,
        mut push: impl FnMut(u32),
    ) -> Result<(), JudgeError> {
        let max = u64::from(vertex_count) - 1;
        self.read_many(
            count,
            max,
            |s| s.vertex(what, vertex_count).map(u64::from),
            |v| push(v as u32),
        )
    }

    /// Reads `count` numbers, handing each to `push`.
    pub(crate) fn read_numbers(
        &mut self,
        count: u64,
        what: &str,
        push: impl FnMut(u64),
    ) -> Result<(), JudgeError> {
        self.read_many(count, u64::MAX, |s| s.number(what).map(|(v, _)| v), push)
    }

    /// Reads `count` numbers in `0..=max`, handing each to `push`: the hot loop of every judge
    /// format (token lists, adjacency lists, rounds).
    ///
    /// Numbers separated by single spaces inside the buffer are parsed in a tight loop that
    /// keeps no locations; anything else (a line break, a buffer boundary, a bad or too large
    /// number) goes through `careful`, which tracks lines and reports errors.
    fn read_many(
        &mut self,
        count: u64,
        max: u64,
        careful: impl Fn(&mut Self) -> Result<u64, JudgeError>,
        mut push: impl FnMut(u64),
    ) -> Result<(), JudgeError> {
        let mut remaining = count;
        while remaining > 0 {
            let buffer = &self.buffer[..self.len];
            let mut pos = self.pos;
            while remaining > 0 {
                let mut start = pos;
                while start < buffer.len() && buffer[start] == b' ' {
                    start += 1;
                }
                let Some((value, digits)) = short_number(&buffer[start..]) else {
                    break;
                };
                if value > max {
                    break;
                }
                push(value);
                remaining -= 1;
                pos = start + digits;
            }
            self.pos = pos;
            if remaining > 0 {
                push(careful(self)?);
                remaining -= 1;
            }
        }
        Ok(())
    }

    /// Reads, from what is already buffered, lists of the form `M v_1 .. v_M` (a count
    /// `1..=budget.max_list`, then `M` vertex ids `< vertex_count`) as long as they fit in
    /// `budget`, appending each `M` to `counts` and the ids to `vertices`; returns how many
    /// it read. It stops, consuming nothing of it, before the first list it cannot take in
    /// one pass: a `0`, a list past the buffer's end or the budget, anything unusual. The
    /// caller reads that one with the careful, error-reporting methods.
    ///
    /// The hot path of a judge file's queries: one tight loop per buffer instead of a call,
    /// an event and a location per query.
    pub(crate) fn read_buffered_lists(
        &mut self,
        vertex_count: u32,
        budget: ListBudget,
        counts: &mut Vec<u32>,
        vertices: &mut Vec<u32>,
    ) -> usize {
        let buffer = &self.buffer[..self.len];
        let max = u64::from(vertex_count);
        let mut pos = self.pos;
        let (mut lists, mut bytes) = (0, 0u64);
        let kept = vertices.len();
        'lists: while lists < budget.lists {
            // Whitespace before the count, counting lines.
            let mut at = pos;
            let (mut line, mut line_start) = (self.line, self.line_start);
            while let Some(&byte) = buffer.get(at) {
                match byte {
                    b' ' | b'\t' | b'\r' => at += 1,
                    b'\n' => {
                        at += 1;
                        line += 1;
                        line_start = self.buffer_offset + at as u64;
                    }
                    _ => break,
                }
            }
            let Some((count, digits)) = short_number(&buffer[at..]) else {
                break;
            };
            let cost = budget.list_bytes + count.saturating_mul(budget.item_bytes);
            if count == 0 || count > budget.max_list || bytes + cost > budget.bytes {
                break;
            }
            at += digits;
            let start = vertices.len();
            for _ in 0..count {
                while buffer.get(at) == Some(&b' ') {
                    at += 1;
                }
                match short_number(&buffer[at..]) {
                    Some((vertex, digits)) if vertex < max => {
                        vertices.push(vertex as u32);
                        at += digits;
                    }
                    _ => {
                        vertices.truncate(start);
                        break 'lists;
                    }
                }
            }
            counts.push(count as u32);
            (pos, self.line, self.line_start) = (at, line, line_start);
            lists += 1;
            bytes += cost;
        }
        debug_assert!(vertices.len() >= kept);
        self.pos = pos;
        lists
    }

    /// Reads a number in `0..=max`.
    pub(crate) fn bounded(&mut self, what: &str, max: u64) -> Result<(u64, Location), JudgeError> {
        let (value, location) = self.number(what)?;
        if value > max {
            return Err(JudgeError::syntax(
                location,
                format!("{what} is {value}, above the maximum {max}"),
            ));
        }
        Ok((value, location))
    }

    /// Reads a vertex id `< vertex_count`.
    pub(crate) fn vertex(&mut self, what: &str, vertex_count: u32) -> Result<u32, JudgeError> {
        let (value, location) = self.number(what)?;
        if value >= u64::from(vertex_count) {
            return Err(JudgeError::syntax(
                location,
                format!("{what} is {value}, out of range: vertices are 0..{vertex_count}"),
            ));
        }
        Ok(value as u32)
    }
}

/// Digits that cannot overflow a `u64` whatever they are (`10^19 - 1 < 2^64`).
const SHORT_NUMBER_DIGITS: usize = 19;

/// The number at the start of `bytes` and its digit count, when it has at most
/// [`SHORT_NUMBER_DIGITS`] digits and a separator follows it inside `bytes`: parsed in one
/// pass, without overflow checks or locations. `None` for anything else (no digit, a number
/// reaching the end of `bytes`, a longer number, a bad byte after the digits), which the
/// caller's careful path handles and reports.
#[inline]
fn short_number(bytes: &[u8]) -> Option<(u64, usize)> {
    if let Some(word) = bytes.first_chunk::<8>() {
        let (value, digits) = eight_digits(u64::from_le_bytes(*word));
        if digits < 8 {
            let complete = digits > 0 && is_separator(bytes[digits]);
            return complete.then_some((value, digits));
        }
    }
    let mut value = 0u64;
    let mut digits = 0;
    while digits < bytes.len().min(SHORT_NUMBER_DIGITS) {
        let digit = bytes[digits].wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value * 10 + u64::from(digit);
        digits += 1;
    }
    let complete = digits > 0 && digits < bytes.len() && is_separator(bytes[digits]);
    complete.then_some((value, digits))
}

/// The leading decimal digits of eight input bytes (loaded little-endian: the first byte
/// lowest) and their count, 0 to 8, without a branch per byte: judge numbers are mostly a
/// few digits, and a loop per digit spent more time on its branches than on the digits.
#[inline]
fn eight_digits(word: u64) -> (u64, usize) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    // A byte is a digit when it is 0x30..=0x39: high nibble 3, and still 3 after adding 6.
    // A carry out of a byte (only from one of 0xfa..) disturbs later bytes alone, and only the
    // first non-digit counts.
    let not_digit =
        ((word & HIGH) ^ (0x30 * ONES)) | ((word.wrapping_add(6 * ONES) & HIGH) ^ (0x30 * ONES));
    let digits = (not_digit.trailing_zeros() / 8) as usize;
    if digits == 0 {
        return (0, 0);
    }
    // The digits' values moved to the top bytes: the bytes below become leading zeros.
    // (With eight digits, the shift is by zero.)
    let mut value = word.wrapping_sub(0x30 * ONES) << ((8 * (8 - digits)) % 64);
    // Pairs, then quads, then the eight digits (most significant digit in the lowest byte).
    // What the multiplications carry past bit 63 or into the odd lanes is masked away.
    value = value.wrapping_mul(10).wrapping_add(value >> 8) & 0x00ff_00ff_00ff_00ff;
    value = value.wrapping_mul(100).wrapping_add(value >> 16) & 0x0000_ffff_0000_ffff;
    value = value.wrapping_mul(10_000).wrapping_add(value >> 32) & 0xffff_ffff;
    (value, digits)
}

fn is_separator(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn describe_byte(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        format!("'{}'", byte as char)
    } else {
        format!("byte 0x{byte:02x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_digits_agrees_with_a_digit_loop() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..200_000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // Mostly digits and separators, sometimes any byte.
            let bytes: [u8; 8] = std::array::from_fn(|i| {
                let r = (rng >> (i * 8)) as u8;
                match (round + i) % 5 {
                    0 => r,
                    1 => b" \n"[usize::from(r & 1)],
                    _ => b'0' + r % 10,
                }
            });
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            let value = bytes[..digits]
                .iter()
                .fold(0u64, |v, &b| v * 10 + u64::from(b - b'0'));
            let got = eight_digits(u64::from_le_bytes(bytes));
            assert_eq!(
                got,
                (if digits == 0 { 0 } else { value }, digits),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn reads_numbers_with_locations() {
        let mut s = Scanner::new("12  7\n\n  3\r\n".as_bytes());
        assert_eq!(
            s.next_number("x").unwrap(),
            Some((12, Location { line: 1, column: 1 }))
        );
        assert_eq!(
            s.next_number("x").unwrap(),
            Some((7, Location { line: 1, column: 5 }))
        );
        assert_eq!(
            s.next_number("x").unwrap(),
            Some((3, Location { line: 3, column: 3 }))
        );
        assert_eq!(s.next_number("x").unwrap(), None);
    }

    #[test]
    fn reports_bad_characters_and_overflow() {
        let mut s = Scanner::new("1 x".as_bytes());
        s.number("a").unwrap();
        let err = s.number("the number of tokens M").unwrap_err().to_string();
        assert_eq!(
            err,
            "line 1, column 3: expected the number of tokens M, found 'x'"
        );
        let mut s = Scanner::new("12a".as_bytes());
        let err = s.number("N").unwrap_err().to_string();
        assert_eq!(
            err,
            "line 1, column 3: expected N, found 'a' inside a number"
        );
        let mut s = Scanner::new("99999999999999999999".as_bytes());
        assert!(
            s.number("N")
                .unwrap_err()
                .to_string()
                .contains("does not fit")
        );
        let mut s = Scanner::new("\n 5".as_bytes());
        s.number("N").unwrap();
        let err = s.number("M").unwrap_err().to_string();
        assert_eq!(err, "line 2, column 3: expected M, found end of input");
    }

    #[test]
    fn bulk_reads_match_one_by_one_reads_across_lines_and_buffers() {
        // Mixed separators and numbers straddling the 256 KiB buffer boundaries.
        let text: String = (0..200_000u32)
            .map(|i| match i % 7 {
                0 => format!("{}\n", i % 1000),
                3 => format!("{}\t ", i % 1000),
                _ => format!("{} ", i % 1000),
            })
            .collect();
        let mut bulk = Vec::new();
        let mut s = Scanner::new(text.as_bytes());
        s.read_vertices(200_000, 1000, "v", |v| bulk.push(v))
            .unwrap();
        let expected: Vec<u32> = (0..200_000).map(|i| i % 1000).collect();
        assert_eq!(bulk, expected);
        assert_eq!(s.next_number("v").unwrap(), None);

        let mut s = Scanner::new("1 2\n3 999 4".as_bytes());
        let err = s.read_vertices(5, 500, "a token", |_| {}).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2, column 3: a token is 999, out of range: vertices are 0..500"
        );
        let mut values = Vec::new();
        let mut s = Scanner::new("18446744073709551615 7 x".as_bytes());
        s.read_numbers(2, "a value", |v| values.push(v)).unwrap();
        assert_eq!(values, vec![u64::MAX, 7]);
        let err = s.read_numbers(1, "a value", |_| {}).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1, column 24: expected a value, found 'x'"
        );
    }

    #[test]
    fn numbers_across_buffer_boundaries() {
        let text: String = (0..200_000).map(|i| format!("{i}\n")).collect();
        let mut s = Scanner::new(text.as_bytes());
        for i in 0..200_000u64 {
            let (value, location) = s.number("n").unwrap();
            assert_eq!(value, i);
            assert_eq!(
                location,
                Location {
                    line: i + 1,
                    column: 1
                }
            );
        }
        assert_eq!(s.next_number("n").unwrap(), None);
    }

    /// A reader handing out one chunk per call, like a pipe whose writer waits in between.
    struct Chunks(Vec<&'static [u8]>);

    impl Read for Chunks {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            let chunk = self.0.remove(0);
            buf[..chunk.len()].copy_from_slice(chunk);
            Ok(chunk.len())
        }
    }

    #[test]
    fn tells_when_the_next_read_may_block() {
        let mut s = Scanner::new(Chunks(vec![b"1 2\n", b"3 \n\n", b"4"]));
        assert!(!s.has_buffered_input(), "nothing read yet");
        assert_eq!(s.number("n").unwrap().0, 1);
        assert!(s.has_buffered_input());
        assert_eq!(s.number("n").unwrap().0, 2);
        // Only a line break is left: the next number needs a read.
        assert!(!s.has_buffered_input());
        assert_eq!(s.number("n").unwrap().0, 3);
        assert!(!s.has_buffered_input());
        let (value, location) = s.number("n").unwrap();
        assert_eq!((value, location), (4, Location { line: 4, column: 1 }));
        assert_eq!(s.next_number("n").unwrap(), None);
        assert!(s.has_buffered_input(), "the end of input is known");
    }
}
