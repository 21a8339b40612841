//! The browser playground: its files, compiled into the binary, and the one HTTP route it
//! needs besides gRPC-Web, all served on the gRPC port by [`WebFront`].
//!
//! With `--web` the server stacks two layers in front of its gRPC services: this one answers
//! `GET /` (and the page's other files) and `POST /render`, and passes every other request
//! on to `tonic_web::GrpcWebLayer`, which translates gRPC-Web calls of the page into gRPC
//! (and lets native gRPC through). So the page, its API calls and its pictures share one
//! origin, one port, one TLS setup and one bearer token.
//!
//! - this module: the layer, routing by method and path, `GET /preload` (the judge file
//!   `grundy play FILE` hands to the page; `204 No Content` without one);
//! - `assets`: the static files (the favicon included, so that no request of the page ends
//!   in an error);
//! - `responses`: the headers every answer carries (no caching, the content security policy);
//! - `render_route`: `POST /render`, a graph with its values (as the page got them from
//!   `GetValues`) in JSON, answered with the SVG of [`crate::render`], the same picture as
//!   `grundy render`.

mod assets;
mod render_route;
mod responses;

use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use tonic::body::Body;

use self::render_route::RenderRoute;
use self::responses::{response, text_response};
use super::auth::BearerAuth;
use super::blocking::WorkPool;
use super::front::{Front, Routed};

/// What the playground serves besides its fixed files.
#[derive(Debug, Clone, Default)]
pub struct WebConfig {
    /// A judge file the page loads on opening (`grundy play FILE`), served as `GET /preload`.
    pub preload: Option<Preload>,
}

/// A judge file handed to the page.
#[derive(Debug, Clone)]
pub struct Preload {
    /// `chess` or `addsub`.
    pub game: &'static str,
    /// The file's text (empty: only the settings below).
    pub text: String,
    /// Whether the page opens under misère play (`grundy play --misere`).
    pub misere: bool,
}

/// Serves the playground in front of the gRPC services (see the module documentation).
#[derive(Debug, Clone)]
pub struct WebFront {
    render: RenderRoute,
    preload: Option<Bytes>,
}

impl WebFront {
    /// `auth` guards `POST /render` like the gRPC calls; the static files are open (the page
    /// must load for a person to enter the token), and so is `GET /preload`, which only
    /// echoes the file its operator chose. Drawings run on `pool`, behind its render
    /// permits; a render body that brings nothing for `start_timeout` is ended.
    pub(crate) fn new(
        config: &WebConfig,
        auth: BearerAuth,
        pool: WorkPool,
        start_timeout: Duration,
    ) -> Self {
        let preload = config.preload.as_ref().map(|preload| {
            let json = serde_json::json!({
                "game": preload.game,
                "text": preload.text,
                "misere": preload.misere,
            });
            Bytes::from(json.to_string())
        });
        Self {
            render: RenderRoute::new(auth, pool, start_timeout),
            preload,
        }
    }
}

impl<S> Front<S> for WebFront {
    fn route(&self, request: Request<Body>, _: &mut S) -> Routed {
        let path = request.uri().path();
        if request.method() == Method::GET || request.method() == Method::HEAD {
            if let Some(response) = assets::lookup(path) {
                return Routed::ready(response);
            }
            if path == "/preload" {
                let response = match &self.preload {
                    Some(json) => response(StatusCode::OK, "application/json", json.clone()),
                    // Nothing to preload is the normal case of a plain `--web` server, not an
                    // error: the page then draws its own sample.
                    None => response(StatusCode::NO_CONTENT, "application/json", Bytes::new()),
                };
                return Routed::ready(response);
            }
        }
        if path == "/render" {
            if request.method() != Method::POST {
                let response = text_response(StatusCode::METHOD_NOT_ALLOWED, "use POST /render");
                return Routed::ready(response);
            }
            let render = self.render.clone();
            return Routed::Answer(Box::pin(async move { render.handle(request).await }));
        }
        Routed::Pass(request)
    }
}
