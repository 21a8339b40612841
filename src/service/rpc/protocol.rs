//! The protocol a call came in by, as the request metrics label it: gRPC, gRPC-Web (the
//! playground, translated by tonic-web) or JSON over HTTP (transcoded in process). Carried in
//! the request's extensions, which reach the RPC's guard through every layer; a request
//! without it is plain gRPC.

use http::header;
use tonic::body::Body;

/// How a call reached the service; see the module documentation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// gRPC over HTTP/2.
    #[default]
    Grpc,
    /// gRPC-Web, translated into gRPC by tonic-web.
    GrpcWeb,
    /// JSON over HTTP, transcoded into gRPC by the JSON layer.
    Json,
}

impl Protocol {
    /// The protocol a request's extensions name (gRPC when none).
    pub(crate) fn of(extensions: &http::Extensions) -> Self {
        extensions.get::<Self>().copied().unwrap_or_default()
    }

    /// The protocol's name, as the metrics' `protocol` label.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Grpc => "grpc",
            Self::GrpcWeb => "grpc-web",
            Self::Json => "json",
        }
    }
}

/// Marks a gRPC-Web request as such (a layer of the router, before tonic-web translates it
/// into gRPC and the content type no longer tells).
pub(crate) fn mark_grpc_web(mut request: http::Request<Body>) -> http::Request<Body> {
    let grpc_web = request
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/grpc-web"));
    if grpc_web {
        request.extensions_mut().insert(Protocol::GrpcWeb);
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_grpc_web_content_types_are_marked_and_the_default_is_grpc() {
        let marked = |content_type: &str| {
            let request = http::Request::builder()
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::empty())
                .unwrap();
            Protocol::of(mark_grpc_web(request).extensions())
        };
        assert_eq!(marked("application/grpc-web+proto"), Protocol::GrpcWeb);
        assert_eq!(marked("application/grpc-web-text"), Protocol::GrpcWeb);
        assert_eq!(marked("application/grpc"), Protocol::Grpc);
        assert_eq!(marked("application/json"), Protocol::Grpc);
        let labels = [Protocol::Grpc, Protocol::GrpcWeb, Protocol::Json].map(Protocol::label);
        assert_eq!(labels, ["grpc", "grpc-web", "json"]);
    }
}
