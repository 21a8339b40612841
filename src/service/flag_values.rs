//! The values of flags, read from their text: byte counts, durations, addresses. Each error
//! says what was expected, with an example (clap puts the flag's name in front).

use std::net::SocketAddr;
use std::time::Duration;

/// A byte count: an integer with an optional suffix B, KiB, MiB, GiB (or K, M, G, also
/// powers of 1024).
pub(crate) fn parse_bytes(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let (digits, suffix) = number_and_unit(text, '_');
    let number: usize = digits
        .replace('_', "")
        .parse()
        .map_err(|_| format!("{text:?} is not a byte count (e.g. 1048576, 512MiB, 1GiB)"))?;
    let unit: usize = match suffix.trim() {
        "" | "B" => 1,
        "K" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        other => {
            return Err(format!(
                "unknown byte unit {other:?} (use B, KiB, MiB or GiB)"
            ));
        }
    };
    number
        .checked_mul(unit)
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// Smallest `--max-message-bytes` (server and CLI): below it even a small graph's stream
/// cannot carry its first messages (a graph's summary alone takes about 150 bytes).
pub const MIN_MESSAGE_BYTES: usize = 256;

/// A message size limit: a byte count (see `parse_bytes`) of at least [`MIN_MESSAGE_BYTES`].
pub fn parse_message_bytes(text: &str) -> Result<usize, String> {
    let bytes = parse_bytes(text)?;
    if bytes < MIN_MESSAGE_BYTES {
        return Err(format!(
            "{bytes} bytes is too small for a gRPC message limit: at least {MIN_MESSAGE_BYTES} \
             (the default is 256MiB)"
        ));
    }
    Ok(bytes)
}

/// A listening address: an IP address and a port (host names are not resolved).
pub(super) fn parse_socket_address(text: &str) -> Result<SocketAddr, String> {
    text.trim().parse().map_err(|_| {
        format!(
            "{text:?} is not an IP address and port: write e.g. 127.0.0.1:50051 (loopback), \
             0.0.0.0:50051 (every interface) or [::1]:50051; host names such as localhost \
             are not resolved"
        )
    })
}

/// An integer of at least 1.
pub(super) fn parse_positive(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) | Err(_) => Err(format!("{text:?} is not a positive integer")),
        Ok(n) => Ok(n),
    }
}

/// A duration, or "off" (the same as 0: the feature is off).
pub(super) fn parse_duration_or_off(text: &str) -> Result<Duration, String> {
    match text.trim() {
        "off" => Ok(Duration::ZERO),
        other => parse_duration(other),
    }
}

/// A duration: an integer or decimal with an optional unit ms, s, m, h (seconds without).
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = number_and_unit(text, '.');
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 30s, 500ms, 2m)"))?;
    let seconds = match unit.trim() {
        "" | "s" => number,
        "ms" => number / 1e3,
        "m" => number * 60.0,
        "h" => number * 3600.0,
        other => {
            return Err(format!(
                "unknown duration unit {other:?} (use ms, s, m or h)"
            ));
        }
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text:?}: {e}"))
}

/// `text` cut where its number ends (digits and `also`) and its unit begins.
fn number_and_unit(text: &str, also: char) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit() && c != also)
        .unwrap_or(text.len());
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_parse() {
        assert_eq!(parse_bytes("1024"), Ok(1024));
        assert_eq!(parse_bytes("64MiB"), Ok(64 << 20));
        assert_eq!(parse_bytes("2G"), Ok(2 << 30));
        assert!(parse_bytes("12 parsecs").is_err());
        assert_eq!(parse_message_bytes("1MiB"), Ok(1 << 20));
        for small in ["0", "1", "2", "255"] {
            let error = parse_message_bytes(small).unwrap_err();
            assert!(error.contains("too small"), "{small}: {error}");
        }
        let error = parse_socket_address("localhost:50068").unwrap_err();
        assert!(error.contains("e.g. 127.0.0.1:50051"), "{error}");
        assert_eq!(
            parse_socket_address("127.0.0.1:50068"),
            Ok(SocketAddr::from(([127, 0, 0, 1], 50068)))
        );
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("soon").is_err());
    }
}
