//! The HTTP responses of the playground's routes, all with the same headers: no caching, and
//! a content security policy that lets the page run only its own files.

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::Full;
use tonic::body::Body;

/// A plain-text response (errors of the render route and of the routing).
pub(super) fn text_response(status: StatusCode, message: &str) -> Response<Body> {
    response(
        status,
        "text/plain; charset=utf-8",
        Bytes::from(format!("{message}\n")),
    )
}

pub(super) fn response(
    status: StatusCode,
    content_type: &'static str,
    body: Bytes,
) -> Response<Body> {
    let mut response = Response::new(Body::new(Full::new(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, content_type.parse().expect("static"));
    headers.insert(header::CACHE_CONTROL, "no-store".parse().expect("static"));
    // The page runs no code from elsewhere: no CDN, no network fetch but its own origin.
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        "default-src 'self'; img-src 'self' data:; style-src 'self'"
            .parse()
            .expect("static"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        "nosniff".parse().expect("static"),
    );
    response
}
