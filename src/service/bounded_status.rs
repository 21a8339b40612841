//! Statuses written outside the service with client-supplied text in them, cut to a bounded
//! excerpt: tonic-reflection answers an unknown symbol or file name with the whole name quoted
//! (`symbol '<name>' not found`), however long the client made it, where the service's own
//! messages quote at most an excerpt ([`super::excerpt::excerpt`]). A layer of
//! [`super::server`] bounds the message in a response's headers (a trailers-only answer) and
//! in its trailers (a stream that ended with it).

use http_body_util::BodyExt;
use tonic::Status;

use super::excerpt::excerpt;

/// Longest `grpc-message` (in bytes as sent, percent-encoded) that passes unchanged. The
/// service's own messages stay under it, excerpts included: 80 characters of client text take
/// at most 960 bytes encoded (four UTF-8 bytes each, three characters a byte), and the 400
/// ASCII characters kept of tonic's decoder text at most 1,200.
const MAX_MESSAGE_BYTES: usize = 2048;

/// Bounds the status message of `response`, in its headers and in its trailers.
pub(crate) fn bound_status_messages(
    response: http::Response<tonic::body::Body>,
) -> http::Response<tonic::body::Body> {
    let (mut parts, body) = response.into_parts();
    bound(&mut parts.headers);
    let body = body.map_frame(|mut frame| {
        if let Some(trailers) = frame.trailers_mut() {
            bound(trailers);
        }
        frame
    });
    http::Response::from_parts(parts, tonic::body::Body::new(body))
}

/// Rewrites the status in `headers` when its message is longer than [`MAX_MESSAGE_BYTES`].
fn bound(headers: &mut http::HeaderMap) {
    let too_long = headers
        .get(Status::GRPC_MESSAGE)
        .is_some_and(|message| message.len() > MAX_MESSAGE_BYTES);
    if !too_long {
        return;
    }
    let Some(status) = Status::from_header_map(headers) else {
        return;
    };
    let bounded = Status::with_details(
        status.code(),
        bounded_message(status.message()),
        status.details().to_vec().into(),
    );
    // An excerpt is printable text, so the headers always encode.
    let _ = bounded.add_header(headers);
}

/// `message` with the name it quotes cut to an excerpt (tonic-reflection's
/// `<kind> '<name>' not found`), or cut whole when it has another shape.
fn bounded_message(message: &str) -> String {
    if let Some((kind, rest)) = message.split_once(" '")
        && let Some(name) = rest.strip_suffix("' not found")
    {
        return format!("{kind} {} not found", excerpt(name));
    }
    excerpt(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_quoted_name_is_cut_to_an_excerpt_and_the_rest_kept() {
        let name = "x".repeat(100_000);
        let message = bounded_message(&format!("symbol '{name}' not found"));
        assert!(message.starts_with("symbol \"xxx"), "{message}");
        assert!(
            message.ends_with("... (100000 bytes) not found"),
            "{message}"
        );
        assert!(message.len() < 150, "{message}");
        let other = bounded_message(&"y".repeat(5_000));
        assert!(other.ends_with("... (5000 bytes)"), "{other}");
    }

    #[test]
    fn only_long_messages_in_headers_are_rewritten() {
        let mut headers = http::HeaderMap::new();
        Status::not_found("symbol 'a.B' not found")
            .add_header(&mut headers)
            .unwrap();
        let before = headers.clone();
        bound(&mut headers);
        assert_eq!(headers, before);
        let long = format!("file '{}' not found", "z".repeat(10_000));
        Status::not_found(long).add_header(&mut headers).unwrap();
        bound(&mut headers);
        let status = Status::from_header_map(&headers).unwrap();
        assert_eq!(status.code(), tonic::Code::NotFound);
        assert!(status.message().len() < 150, "{}", status.message());
        assert!(
            status.message().starts_with("file \"zzz"),
            "{}",
            status.message()
        );
    }
}
