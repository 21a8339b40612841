//! Fuzz tier: mutated judge files through both judge parsers, the library readers directly
//! (many cases, fast) and the whole `grundy judge` CLI (fewer cases).
//!
//! Every valid `tests/data/*.in` (the samples among them) is mutated with a seeded RNG:
//! truncations, digit and sign edits, huge numbers, out-of-range vertex ids, CR and CRLF line
//! ends, NUL and non-UTF-8 bytes, whitespace edits, and edits at the boundaries of the
//! scanner's 256 KiB read buffer (the file padded so that the edit lands there), read through
//! a reader handing out chunks of random sizes. The expected result of every mutated file
//! comes from an independent model of the formats (`support/judge_model.rs`), and:
//!
//! - no reader panics, and its events equal the model's;
//! - an error names the `line L, column C` the model computed, with the expected kind;
//! - the events (CLI: the verdict lines) before the mutation equal those of the unmutated
//!   file (CLI: its golden `.out`);
//! - the CLI exits 0 on valid input and 2 on malformed input (README, "Exit codes").
//!
//! `cargo test` runs a bounded number of cases; more on demand, e.g.
//! `GRUNDY_FUZZ_CASES=100000 GRUNDY_FUZZ_CLI_CASES=2000 cargo test --release --test cli fuzz_judge`,
//! with `GRUNDY_FUZZ_SEED=N` for another sequence. A failure names the seed and the case.

use std::fs;
use std::io::{self, Read};
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::process::Command;

use crate::support::judge_model::{self, Event, Format, Parse, Place, Role, token_spans};
use crate::support::process;
use grundy::judge::JudgeError;
use grundy::judge::addsub::{AddsubEvent, AddsubReader};
use grundy::judge::chess::{ChessEvent, ChessReader};

const GRUNDY: &str = env!("CARGO_BIN_EXE_grundy");

/// The scanner's read buffer (`BUFFER_BYTES` in `src/judge/scanner/mod.rs`).
const SCANNER_BUFFER: usize = 256 * 1024;

/// Library cases per format in `cargo test` (about 1 ms each).
const DEFAULT_CASES: u64 = 3000;
/// CLI runs per format in `cargo test` (each starts the embedded server: 20-60 ms).
const DEFAULT_CLI_CASES: u64 = 60;
const DEFAULT_SEED: u64 = 0x6772_756e_6479;

#[test]
fn chess_reader_survives_mutations() {
    fuzz_library(Format::Chess);
}

#[test]
fn addsub_reader_survives_mutations() {
    fuzz_library(Format::Addsub);
}

#[test]
fn chess_cli_survives_mutations() {
    fuzz_cli(Format::Chess);
}

#[test]
fn addsub_cli_survives_mutations() {
    fuzz_cli(Format::Addsub);
}

/// The model itself, on inputs whose outcome is known by hand.
#[test]
fn the_model_agrees_with_hand_checked_inputs() {
    let chess = judge_model::parse(Format::Chess, b"2\n1 1\n0\n1 0\n1 7\n");
    assert_eq!(chess.events.len(), 2);
    let error = chess.error.unwrap();
    assert_eq!((error.place, error.keyword), (place(5, 3), "out of range"));
    let addsub = judge_model::parse(Format::Addsub, b"1\n1 0\n0\n1\n5\r\n x");
    let error = addsub.error.unwrap();
    assert_eq!((error.place, error.keyword), (place(6, 2), "found"));
    let eof = judge_model::parse(Format::Chess, b"1\n0\n1 0");
    let error = eof.error.unwrap();
    assert_eq!((error.place, error.keyword), (place(3, 4), "end of input"));
}

fn place(line: u64, column: u64) -> Place {
    Place { line, column }
}

// ----- the corpus -----

/// A valid judge file with its golden output and its model parse.
struct Sample {
    name: String,
    input: Vec<u8>,
    golden: Vec<Vec<u8>>,
    parse: Parse,
}

/// Every valid `tests/data/<format>_*.in` with its `.out`.
fn corpus(format: Format) -> Vec<Sample> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&format!("{}_", format.name())) && name.ends_with(".in"))
        .collect();
    names.sort();
    let samples: Vec<Sample> = names
        .into_iter()
        .map(|name| {
            let input = fs::read(dir.join(&name)).unwrap();
            let golden = fs::read(dir.join(name.replace(".in", ".out"))).unwrap();
            let parse = judge_model::parse(format, &input);
            assert!(
                parse.error.is_none(),
                "{name}: the model rejects a valid file"
            );
            Sample {
                name,
                input,
                golden: lines(&golden),
                parse,
            }
        })
        .collect();
    assert!(samples.len() >= 5, "too few {} samples", format.name());
    samples
}

fn lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

// ----- the mutations -----

/// SplitMix64: small, seeded, the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Bytes that never belong in a judge file: letters, signs, NUL, non-UTF-8.
const BAD_BYTES: &[u8] = b"x-+.#e\0\xff\xc3\x80\x7f";

/// Numbers that are huge for some role or for 64 bits.
const HUGE: &[&str] = &[
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999",
    "00000000000000000000000000000000001",
];

/// Numbers that overflow 64 bits (an error wherever they stand).
const OVERFLOWING: &[&str] = &["18446744073709551616", "99999999999999999999999999999"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Truncate,
    ReplaceByte,
    InsertByte,
    DigitEdit,
    Sign,
    Huge,
    Overflow,
    OutOfRange,
    Crlf,
    BareCr,
    Whitespace,
}

/// Every kind, for the library; the CLI leaves out the kinds that may change a graph (an
/// addsub cycle, a harder game): what follows the mutation is then not the golden file's.
const ALL_KINDS: &[Kind] = &[
    Kind::Truncate,
    Kind::ReplaceByte,
    Kind::InsertByte,
    Kind::DigitEdit,
    Kind::Sign,
    Kind::Huge,
    Kind::Overflow,
    Kind::OutOfRange,
    Kind::Crlf,
    Kind::BareCr,
    Kind::Whitespace,
];
const CLI_KINDS: &[Kind] = &[
    Kind::Truncate,
    Kind::ReplaceByte,
    Kind::InsertByte,
    Kind::Sign,
    Kind::Overflow,
    Kind::OutOfRange,
    Kind::Crlf,
    Kind::BareCr,
];

/// A mutated file: its bytes, and the offset (in the original) of the first changed byte.
struct Mutant {
    input: Vec<u8>,
    first_change: usize,
    label: String,
}

/// Mutates `sample`; with `at_boundary`, pads it first so that the mutation lands within a
/// few bytes of a multiple of the scanner's buffer size.
fn mutate(rng: &mut Rng, kinds: &[Kind], sample: &Sample, at_boundary: bool) -> Mutant {
    let kind = *rng.pick(kinds);
    let original = &sample.input;
    let mut input = original.clone();
    let mut target = rng.below(original.len() + 1);
    let mut padded_at = None;
    let mut label = String::new();
    if at_boundary {
        // Padding goes into the whitespace before the line of `target` (or the file's start):
        // blank lines and spaces, harmless anywhere between numbers.
        let at = original[..target.min(original.len())]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let boundary = SCANNER_BUFFER * (1 + rng.below(2));
        let landing = boundary + rng.below(7) - 3;
        let pad_len = landing.saturating_sub(target);
        let pad: Vec<u8> = (0..pad_len)
            .map(|i| if i % 97 == 96 { b'\n' } else { b' ' })
            .collect();
        input.splice(at..at, pad);
        padded_at = Some(at);
        target += pad_len;
        label = format!("padded {pad_len} at {at}, then ");
    }
    let tokens = token_spans(&input);
    let token = tokens
        .iter()
        .position(|&(_, end)| end >= target)
        .unwrap_or(tokens.len().saturating_sub(1));
    let (start, end) = tokens.get(token).copied().unwrap_or((0, 0));
    let shift = input.len() - original.len();
    // Offsets before the padding are the same in the original and the mutant; with padding,
    // the first change is at the padding at the latest.
    let change = |offset: usize| padded_at.map_or(offset, |at| offset.min(at));
    let first_change;
    label += &format!("{kind:?}");
    match kind {
        Kind::Truncate => {
            input.truncate(target);
            first_change = change(target);
        }
        Kind::ReplaceByte | Kind::InsertByte => {
            let byte = *rng.pick(BAD_BYTES);
            let at = target.min(input.len());
            if kind == Kind::ReplaceByte && at < input.len() {
                input[at] = byte;
            } else {
                input.insert(at, byte);
            }
            first_change = change(at);
            label += &format!(" 0x{byte:02x} at {at}");
        }
        Kind::DigitEdit if end > start => {
            let at = start + rng.below(end - start);
            input[at] = b'0' + rng.below(10) as u8;
            first_change = change(at);
        }
        Kind::Sign => {
            input.insert(start, *rng.pick(b"-+"));
            first_change = change(start);
        }
        Kind::Huge | Kind::Overflow | Kind::OutOfRange => {
            let number = match kind {
                Kind::Huge => rng.pick(HUGE).to_string(),
                Kind::Overflow => rng.pick(OVERFLOWING).to_string(),
                _ => out_of_range_vertex(rng, sample, shift, start),
            };
            input.splice(start..end, number.bytes());
            first_change = change(start);
            label += &format!(" {number} at {start}");
        }
        Kind::Crlf | Kind::BareCr => {
            let newline: &[u8] = if kind == Kind::Crlf { b"\r\n" } else { b"\r" };
            // Every line end changes, the padding's and the original's alike.
            let first_newline = original.iter().position(|&b| b == b'\n');
            first_change = first_newline
                .unwrap_or(original.len())
                .min(change(original.len()));
            let mut converted = Vec::with_capacity(input.len() * 2);
            for &byte in &input {
                if byte == b'\n' {
                    converted.extend_from_slice(newline);
                } else {
                    converted.push(byte);
                }
            }
            input = converted;
        }
        Kind::Whitespace | Kind::DigitEdit => {
            let at = target.min(input.len());
            const WHITESPACE: [&[u8]; 6] = [b"\n\n", b" ", b"\t", b"\x0b", b"\x0c", b"\r"];
            let text = rng.pick(&WHITESPACE);
            input.splice(at..at, text.iter().copied());
            first_change = change(at);
        }
    }
    Mutant {
        input,
        first_change,
        label,
    }
}

/// A vertex id just out of range for the vertex token nearest `start` (in the original's
/// coordinates), or a plain out-of-range guess when there is none.
fn out_of_range_vertex(rng: &mut Rng, sample: &Sample, shift: usize, start: usize) -> String {
    let original_start = start.saturating_sub(shift);
    let vertex_count = sample
        .parse
        .tokens
        .iter()
        .filter(|t| t.start >= original_start)
        .find_map(|t| match t.role {
            Role::Vertex { vertex_count } => Some(vertex_count),
            Role::Number => None,
        })
        .unwrap_or(u64::from(u32::MAX));
    let choices = [vertex_count, vertex_count + 1, u64::from(u32::MAX)];
    rng.pick(&choices).to_string()
}

// ----- the library runs -----

fn fuzz_library(format: Format) {
    let samples = corpus(format);
    let seed = env_number("GRUNDY_FUZZ_SEED", DEFAULT_SEED) ^ format as u64;
    let cases = env_number("GRUNDY_FUZZ_CASES", DEFAULT_CASES);
    let mut rng = Rng(seed);
    let mut errors = 0;
    for case in 0..cases {
        let sample = rng.pick(&samples);
        let at_boundary = rng.below(10) == 0;
        let mutant = mutate(&mut rng, ALL_KINDS, sample, at_boundary);
        let chunking = *rng.pick(&[usize::MAX, 1, 7, 4096, 100_000]);
        let context = format!(
            "seed {seed:#x} case {case}: {} {} (chunks of {chunking})",
            sample.name, mutant.label
        );
        let reader = Chunked {
            data: &mutant.input,
            position: 0,
            max_chunk: chunking,
            rng: Rng(case),
        };
        let (events, error) = panic::catch_unwind(AssertUnwindSafe(|| read_all(format, reader)))
            .unwrap_or_else(|_| panic!("{context}: the reader panicked"));
        let model = judge_model::parse(format, &mutant.input);
        let expected: Vec<&Event> = model.events.iter().map(|(e, _)| e).collect();
        let actual: Vec<&Event> = events.iter().collect();
        assert!(
            expected == actual,
            "{context}: events differ from the model's"
        );
        check_error(&context, error.as_ref(), model.error.as_ref());
        let unchanged = unchanged_events(&sample.parse, mutant.first_change);
        assert!(
            events.len() >= unchanged.len() && events[..unchanged.len()] == unchanged[..],
            "{context}: the events before the mutation differ from the valid file's"
        );
        errors += usize::from(error.is_some());
    }
    // A fuzzer whose mutations never break anything tests nothing.
    assert!(
        errors as u64 > cases / 4,
        "only {errors} of {cases} mutants were malformed"
    );
}

fn check_error(
    context: &str,
    actual: Option<&JudgeError>,
    expected: Option<&judge_model::ExpectedError>,
) {
    match (actual, expected) {
        (None, None) => {}
        (Some(JudgeError::Syntax { location, message }), Some(expected)) => {
            let actual = place(location.line, location.column);
            assert_eq!(
                actual, expected.place,
                "{context}: error location ({message})"
            );
            assert!(
                message.contains(expected.keyword),
                "{context}: message {message:?} lacks {:?}",
                expected.keyword
            );
        }
        (actual, expected) => {
            panic!("{context}: error {actual:?}, the model expected {expected:?}")
        }
    }
}

/// The events of the valid file that end before `first_change`: a mutation cannot touch them.
fn unchanged_events(parse: &Parse, first_change: usize) -> Vec<Event> {
    parse
        .events
        .iter()
        .take_while(|(_, end)| *end < first_change)
        .map(|(event, _)| event.clone())
        .collect()
}

/// A reader handing out chunks of 1 to `max_chunk` bytes: every offset can be a buffer end.
struct Chunked<'a> {
    data: &'a [u8],
    position: usize,
    max_chunk: usize,
    rng: Rng,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.data.len() - self.position;
        let chunk = 1 + self.rng.below(self.max_chunk.min(left.max(1)));
        let n = chunk.min(buf.len()).min(left);
        buf[..n].copy_from_slice(&self.data[self.position..self.position + n]);
        self.position += n;
        Ok(n)
    }
}

/// Every event of the real reader, and its error if it stopped on one.
fn read_all(format: Format, input: impl Read) -> (Vec<Event>, Option<JudgeError>) {
    let mut events = Vec::new();
    let error = match format {
        Format::Chess => {
            let mut reader = ChessReader::new(input);
            loop {
                match reader.next_event() {
                    Ok(Some(event)) => events.push(chess_event(event)),
                    Ok(None) => break None,
                    Err(e) => break Some(e),
                }
            }
        }
        Format::Addsub => {
            let mut reader = AddsubReader::new(input);
            loop {
                match reader.next_event() {
                    Ok(Some(event)) => events.push(addsub_event(event)),
                    Ok(None) => break None,
                    Err(e) => break Some(e),
                }
            }
        }
    };
    (events, error)
}

fn chess_event(event: ChessEvent<'_>) -> Event {
    match event {
        ChessEvent::Graph {
            location,
            out_degrees,
            targets,
            ..
        } => Event::Graph {
            place: place(location.line, location.column),
            out_degrees,
            targets,
        },
        ChessEvent::Query(tokens) => Event::Query(tokens.to_vec()),
        ChessEvent::EndOfCase => Event::End,
    }
}

fn addsub_event(event: AddsubEvent<'_>) -> Event {
    match event {
        AddsubEvent::Game {
            location,
            vertex_count,
            edges,
            split_counts,
            rounds,
            ..
        } => Event::Game {
            place: place(location.line, location.column),
            vertex_count,
            edges,
            split_counts,
            rounds,
        },
        AddsubEvent::Round(odd_vertices) => Event::Round(odd_vertices.to_vec()),
        AddsubEvent::EndOfGame => Event::End,
    }
}

// ----- the CLI runs -----

fn fuzz_cli(format: Format) {
    let samples: Vec<Sample> = corpus(format)
        .into_iter()
        // The 5,000-vertex chain's graph dominates the run time and adds nothing here.
        .filter(|s| s.input.len() < 64 * 1024)
        .collect();
    let seed = env_number("GRUNDY_FUZZ_SEED", DEFAULT_SEED) ^ (0x100 + format as u64);
    let cases = env_number("GRUNDY_FUZZ_CLI_CASES", DEFAULT_CLI_CASES);
    let mut rng = Rng(seed);
    for case in 0..cases {
        let sample = rng.pick(&samples);
        let at_boundary = rng.below(8) == 0;
        let mutant = mutate(&mut rng, CLI_KINDS, sample, at_boundary);
        let context = format!(
            "seed {seed:#x} CLI case {case}: {} {}",
            sample.name, mutant.label
        );
        let model = judge_model::parse(format, &mutant.input);
        let output = process::run(
            Command::new(GRUNDY).args(["judge", format.name()]),
            Some(mutant.input.clone()),
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = lines(&output.stdout);
        let expected_lines: usize = model
            .events
            .iter()
            .map(|(e, _)| e.output_lines(format))
            .sum();
        assert_eq!(
            stdout.len(),
            expected_lines,
            "{context}: verdict lines; stderr {stderr}"
        );
        let unchanged: usize = unchanged_events(&sample.parse, mutant.first_change)
            .iter()
            .map(|e| e.output_lines(format))
            .sum();
        assert!(
            stdout[..unchanged] == sample.golden[..unchanged],
            "{context}: the {unchanged} lines before the mutation differ from the golden file"
        );
        match model.error {
            None => assert_eq!(output.status.code(), Some(0), "{context}: {stderr}"),
            Some(expected) => {
                assert_eq!(output.status.code(), Some(2), "{context}: {stderr}");
                let prefix = format!("error: {}: ", expected.place);
                assert!(
                    stderr.starts_with(&prefix) && stderr.contains(expected.keyword),
                    "{context}: stderr {stderr:?}, expected {prefix}...{}...",
                    expected.keyword
                );
            }
        }
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a number")),
        Err(_) => default,
    }
}
