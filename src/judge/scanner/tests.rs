//! The scanner's locations, errors, buffer boundaries and bulk reads.

use super::*;

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
        "line 2, column 3: a token is 999, out of range: vertices are 0 to 499"
    );
    let mut parities = Vec::new();
    let mut s =
        Scanner::new("18446744073709551615 7 10000000000000000000 12345678 8\n3 x".as_bytes());
    s.read_parities(6, "a value", |odd| parities.push(odd))
        .unwrap();
    assert_eq!(parities, vec![true, true, false, false, false, true]);
    let err = s.read_parities(1, "a value", |_| {}).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 2, column 3: expected a value, found 'x'"
    );
    let mut s = Scanner::new("7 18446744073709551616 1".as_bytes());
    let err = s.read_parities(3, "a value", |_| {}).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 1, column 3: a value does not fit in 64 bits"
    );
}

#[test]
fn parities_across_buffer_boundaries_match_the_numbers() {
    let numbers: Vec<u64> = (0..50_000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (i % 64))
        .collect();
    let text: String = numbers
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{n}{}", if i % 7 == 0 { "\n" } else { " " }))
        .collect();
    for buffer in [1, 7, 64, 4096] {
        let mut s = Scanner::with_buffer_bytes(text.as_bytes(), buffer);
        let mut parities = Vec::new();
        s.read_parities(numbers.len() as u64, "a value", |odd| parities.push(odd))
            .unwrap();
        let expected: Vec<bool> = numbers.iter().map(|n| n & 1 == 1).collect();
        assert_eq!(parities, expected, "buffer of {buffer} bytes");
        assert_eq!(s.next_number("v").unwrap(), None);
    }
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

#[test]
fn bulk_reads_take_lists_and_stop_inside_the_text() {
    // Lists of ids of 1 to 10 digits (some too large for the vertex count, some over
    // `u32::MAX`), with counts out of range now and then.
    let mut generator = crate::generate::Rng::new(0x51_7cc1_b727_220a);
    let mut taken = 0;
    for round in 0..2_000 {
        let most_digits = 1 + round % 10;
        let vertex_count = [1_000, 123_456_789, u32::MAX][round % 3];
        let mut text = String::new();
        for _ in 0..1 + generator.next_u64() % 40 {
            let count = generator.next_u64() % 40;
            text.push_str(&format!("{count}"));
            for _ in 0..count {
                let digits = 1 + generator.next_u64() % most_digits as u64;
                let id = generator.next_u64() % 10u64.pow(digits as u32);
                let separator = [" ", "\n", "  ", "\t"][(generator.next_u64() % 4) as usize];
                text.push_str(&format!("{separator}{id}"));
            }
            text.push('\n');
        }
        let budget = ListBudget {
            lists: 1 + (generator.next_u64() % 50) as usize,
            bytes: generator.next_u64() % 2_000,
            list_bytes: 1,
            item_bytes: 1,
            min_list: 0,
            max_list: 30,
        };
        let (mut counts, mut vertices) = (vec![7], vec![9]);
        let (lists, consumed) = lists::read_lists(
            text.as_bytes(),
            0,
            vertex_count,
            budget,
            &mut counts,
            &mut vertices,
        );
        assert_eq!(counts.len(), lists + 1, "round {round}");
        assert!(consumed <= text.len(), "round {round}");
        taken += lists;
    }
    assert!(
        taken > 2_000,
        "{taken} lists taken: the inputs stop the reads too early"
    );
}

/// Every number of a scanner with its location, the buffer grown to `grown` bytes after the
/// first `grow_after` (as a large graph grows it).
fn numbers_growing<R: Read>(
    mut scanner: Scanner<R>,
    grow_after: usize,
    grown: usize,
) -> Vec<(u64, Location)> {
    let mut numbers = Vec::new();
    while let Some(number) = scanner.next_number("a number").unwrap() {
        numbers.push(number);
        if numbers.len() == grow_after {
            scanner.grow_buffer(grown);
        }
    }
    numbers
}

#[test]
fn a_grown_buffer_reads_every_number_where_it_is() {
    let text: String = (0..3000u64)
        .map(|i| {
            format!(
                "{}{}",
                i * 7919 % 100_003,
                ["  ", "\n", " ", "\r\n"][i as usize % 4]
            )
        })
        .collect();
    let expected = numbers_growing(Scanner::new(text.as_bytes()), usize::MAX, 0);
    assert_eq!(expected.len(), 3000);
    for (buffer, grow_after, grown) in [(16, 10, 64), (100, 1, 4096), (7, 300, 9), (5, 2999, 50)] {
        let owned = Scanner::with_buffer_bytes(text.as_bytes(), buffer);
        assert_eq!(
            numbers_growing(owned, grow_after, grown),
            expected,
            "buffer of {buffer}, grown to {grown} after {grow_after} numbers"
        );
    }
}
