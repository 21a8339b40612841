//! A streaming reader of whitespace-separated unsigned numbers that knows the line and column
//! of everything it reads. It holds one buffer (256 KiB, grown to 8 MiB from a large graph on),
//! never the whole input.

use std::io::{self, Read};

use super::digits::{is_separator, short_number, short_parity};
use super::error::{JudgeError, Location};

mod lists;

pub use lists::ListBudget;

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

/// The buffer a large graph is read through (see [`Scanner::grow_buffer`]): fewer, longer
/// bulk reads of its adjacency lists.
pub(crate) const LARGE_GRAPH_BUFFER_BYTES: usize = 8 << 20;

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

    /// Makes the buffer at least `bytes` long (the unread input moved to its start), so that
    /// each refill reads that much.
    pub(crate) fn grow_buffer(&mut self, bytes: usize) {
        if self.buffer.len() >= bytes {
            return;
        }
        let unread = self.len - self.pos;
        let mut buffer = vec![0; bytes].into_boxed_slice();
        buffer[..unread].copy_from_slice(&self.buffer[self.pos..self.len]);
        self.buffer = buffer;
        self.buffer_offset += self.pos as u64;
        (self.pos, self.len) = (0, unread);
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
            |bytes| short_number(bytes).filter(|&(value, _)| value <= max),
            |s| s.vertex(what, vertex_count).map(u64::from),
            |v| push(v as u32),
        )
    }

    /// Reads `count` numbers (each up to `u64::MAX`), handing `push` only whether each is odd:
    /// the short ones are not converted.
    pub(crate) fn read_parities(
        &mut self,
        count: u64,
        what: &str,
        push: impl FnMut(bool),
    ) -> Result<(), JudgeError> {
        self.read_many(
            count,
            short_parity,
            |s| s.number(what).map(|(v, _)| v & 1 == 1),
            push,
        )
    }

    /// Reads `count` numbers, handing what `fast` or `careful` makes of each to `push`: the hot
    /// loop of every judge format (token lists, adjacency lists, rounds).
    ///
    /// Numbers separated by single spaces inside the buffer are parsed by `fast` in a tight
    /// loop that keeps no locations; anything `fast` does not take (a line break, a buffer
    /// boundary, a bad or too large number) goes through `careful`, which tracks lines and
    /// reports errors.
    fn read_many<T>(
        &mut self,
        count: u64,
        fast: impl Fn(&[u8]) -> Option<(T, usize)>,
        careful: impl Fn(&mut Self) -> Result<T, JudgeError>,
        mut push: impl FnMut(T),
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
                let Some((value, digits)) = fast(&buffer[start..]) else {
                    break;
                };
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
                format!(
                    "{what} is {value}, out of range: {}",
                    vertex_range(vertex_count)
                ),
            ));
        }
        Ok(value as u32)
    }
}

/// The valid vertex ids in words, both ends included ("0..4" read as inclusive misled).
fn vertex_range(vertex_count: u32) -> String {
    match vertex_count {
        0 => "the graph has no vertices".to_string(),
        1 => "the only vertex is 0".to_string(),
        n => format!("vertices are 0 to {}", n - 1),
    }
}

fn describe_byte(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        format!("'{}'", byte as char)
    } else {
        format!("byte 0x{byte:02x}")
    }
}

#[cfg(test)]
mod tests;
