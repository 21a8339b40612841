//! The router's own layers in front of tonic (the rate limit, the playground, JSON over HTTP,
//! the admission of unary calls) have one shape: each looks at a request and either answers
//! it itself or passes it on, changed or not. [`Front`] is that decision; [`FrontLayer`]
//! makes any front a tower layer, so the plumbing is written once.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response};
use tonic::body::Body;

/// A response a front makes itself.
pub(crate) type Answer = Pin<Box<dyn Future<Output = Response<Body>> + Send>>;

/// What a front makes of a request.
#[expect(
    clippy::large_enum_variant,
    reason = "made and matched once per request; boxing the request would allocate each time"
)]
pub(crate) enum Routed {
    /// On to the stack behind the front.
    Pass(Request<Body>),
    /// Answered by the front.
    Answer(Answer),
}

impl Routed {
    /// A response that is ready.
    pub(crate) fn ready(response: Response<Body>) -> Self {
        Routed::Answer(Box::pin(std::future::ready(response)))
    }
}

/// A layer of the router that answers some requests itself.
pub(crate) trait Front<S>: Clone {
    /// Answers `request` or passes it on. `inner`, the stack behind, is ready: a front that
    /// calls it from its answer takes it and leaves a clone in its place.
    fn route(&self, request: Request<Body>, inner: &mut S) -> Routed;
}

/// The tower layer of a [`Front`].
#[derive(Debug, Clone)]
pub(crate) struct FrontLayer<F>(pub(crate) F);

impl<F: Clone, S> tower::Layer<S> for FrontLayer<F> {
    type Service = FrontService<F, S>;

    fn layer(&self, inner: S) -> Self::Service {
        FrontService {
            front: self.0.clone(),
            inner,
        }
    }
}

/// The service of a [`FrontLayer`].
#[derive(Debug, Clone)]
pub(crate) struct FrontService<F, S> {
    front: F,
    inner: S,
}

impl<F, S> tower::Service<Request<Body>> for FrontService<F, S>
where
    F: Front<S>,
    S: tower::Service<Request<Body>, Response = Response<Body>>,
    S::Future: Send + 'static,
    S::Error: 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        match self.front.route(request, &mut self.inner) {
            Routed::Pass(request) => Box::pin(self.inner.call(request)),
            Routed::Answer(answer) => Box::pin(async move { Ok(answer.await) }),
        }
    }
}
