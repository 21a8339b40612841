//! `--rate-limit`: at most so many requests per second (or minute) from one client, for
//! operators who open the port to the public. Off by default.
//!
//! [`RateLimitFront`] is the router's outermost layer, so every protocol counts alike: a gRPC
//! call (each stream is one request, however many queries it carries), a gRPC-Web call, a
//! JSON request, a picture, a file of the playground. Health checks pass uncounted (probes
//! must not be refused). A client is its bearer token when it presents the server's token
//! (every holder of the token shares its budget), else its address (an IPv6 address by its
//! /64 prefix, the block one host is given): a wrong token mints no budget of its own.
//!
//! Over the limit a request is refused before anything of it is read: gRPC with
//! RESOURCE_EXHAUSTED (reason `RATE_LIMITED`, a `RetryInfo` of the wait), HTTP with 429,
//! `Retry-After` and the same `google.rpc.Status` in JSON. The budgets are governor's GCRA
//! cells, a few dozen bytes per client; those idle long enough to be full again are
//! forgotten every [`SWEEP_EVERY`] requests, and at most [`MAX_CLIENTS`] are kept: past that,
//! new clients share one budget, so memory stays bounded whatever addresses arrive.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use http::{Request, Response, header};
use prost_reflect::DescriptorPool;
use sha2::{Digest, Sha256};
use tonic::Status;
use tonic::body::Body;
use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo};

use super::auth::BearerAuth;
use super::config::RateLimit;
use super::error::ServiceError;
use super::front::{Front, Routed};
use super::json::error_response;
use super::metrics::Metrics;
use super::rpc::protocol::Protocol;

/// Requests between two sweeps of the idle clients' budgets.
const SWEEP_EVERY: u64 = 4096;

/// Most clients with a budget of their own.
const MAX_CLIENTS: usize = 100_000;

/// governor's quota of `rate`: `count` per period, `count` at once.
fn quota(rate: RateLimit) -> Quota {
    if rate.period >= Duration::from_secs(60) {
        Quota::per_minute(rate.count)
    } else {
        Quota::per_second(rate.count)
    }
}

/// Who a request's budget belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Client {
    /// The holders of the server's token (its SHA-256, never the token).
    Token([u8; 32]),
    /// An IPv4 address, or an IPv6 /64 prefix.
    Address(u128),
    /// No address known (in-process pipes), or past [`MAX_CLIENTS`].
    Shared,
}

/// The limiter every connection shares.
#[derive(Debug)]
struct Limiter {
    rate: RateLimit,
    budgets: DefaultKeyedRateLimiter<Client>,
    clock: DefaultClock,
    requests: AtomicU64,
    auth: BearerAuth,
    pool: DescriptorPool,
    metrics: Arc<Metrics>,
}

impl Limiter {
    /// The wait before `request` may pass, or `None` when it may pass now.
    fn check(&self, request: &Request<Body>) -> Option<(Duration, &'static str)> {
        if self.requests.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.budgets.retain_recent();
            self.budgets.shrink_to_fit();
        }
        let mut client = client_of(request, &self.auth);
        if self.budgets.len() >= MAX_CLIENTS && client != Client::Shared {
            client = Client::Shared;
        }
        let key = match client {
            Client::Token(_) => "token",
            Client::Address(_) | Client::Shared => "address",
        };
        match self.budgets.check_key(&client) {
            Ok(()) => None,
            Err(not_until) => Some((not_until.wait_time_from(self.clock.now()), key)),
        }
    }

    /// The refusal of `request`, which must wait `wait`, in its own protocol.
    fn refuse(&self, request: &Request<Body>, wait: Duration, key: &'static str) -> Response<Body> {
        let error = ServiceError::RateLimited {
            rate: self.rate.to_string(),
            key,
            retry_after: wait,
        };
        let reason = super::error::reason_name(error.reason());
        let status = Status::from(error);
        let protocol = if is_grpc(request) {
            Protocol::of(request.extensions())
        } else {
            Protocol::Json
        };
        let rpc = rpc_name(request.uri().path());
        self.metrics
            .request_finished(rpc, protocol, status.code(), reason, Duration::ZERO);
        tracing::debug!(rpc, key, wait_ms = wait.as_millis(), "rate limited");
        if is_grpc(request) {
            status.into_http()
        } else {
            error_response(&self.pool, &status)
        }
    }
}

/// The request's client: its token when it is the server's, else its address.
fn client_of(request: &Request<Body>, auth: &BearerAuth) -> Client {
    let authorization = request.headers().get(header::AUTHORIZATION);
    if let Some(value) = authorization
        && auth.requires_token()
        && auth.check(Some(value.as_bytes())).is_ok()
    {
        return Client::Token(Sha256::digest(value.as_bytes()).into());
    }
    let extensions = request.extensions();
    let address = extensions
        .get::<TcpConnectInfo>()
        .and_then(TcpConnectInfo::remote_addr)
        .or_else(|| {
            extensions
                .get::<TlsConnectInfo<TcpConnectInfo>>()
                .and_then(|tls| tls.get_ref().remote_addr())
        });
    match address.map(|address| address.ip().to_canonical()) {
        Some(IpAddr::V4(v4)) => Client::Address(u128::from(v4.to_bits())),
        Some(IpAddr::V6(v6)) => Client::Address(v6.to_bits() >> 64 << 64),
        None => Client::Shared,
    }
}

/// True for gRPC and gRPC-Web requests.
fn is_grpc(request: &Request<Body>) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/grpc"))
}

/// The metrics' name of what a path calls (the RPC of a gRPC path, else `http`).
fn rpc_name(path: &str) -> &'static str {
    const NAMES: [&str; 4] = ["Evaluate", "EvaluateBatch", "PutGraph", "GetValues"];
    let method = path.strip_prefix("/grundy.v1.GrundyService/");
    NAMES
        .into_iter()
        .find(|name| method == Some(*name))
        .unwrap_or("http")
}

/// The layer of `--rate-limit` (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct RateLimitFront {
    limiter: Arc<Limiter>,
}

impl RateLimitFront {
    /// The layer of `rate`, telling token holders apart with `auth`.
    pub(crate) fn new(
        rate: RateLimit,
        auth: BearerAuth,
        pool: DescriptorPool,
        metrics: Arc<Metrics>,
    ) -> Self {
        let limiter = Limiter {
            rate,
            budgets: DefaultKeyedRateLimiter::keyed(quota(rate)),
            clock: DefaultClock::default(),
            requests: AtomicU64::new(0),
            auth,
            pool,
            metrics,
        };
        Self {
            limiter: Arc::new(limiter),
        }
    }
}

impl<S> Front<S> for RateLimitFront {
    fn route(&self, request: Request<Body>, _: &mut S) -> Routed {
        let exempt = request.uri().path().starts_with("/grpc.health.v1.Health/");
        if !exempt && let Some((wait, key)) = self.limiter.check(&request) {
            return Routed::ready(self.limiter.refuse(&request, wait, key));
        }
        Routed::Pass(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_read_per_second_or_minute() {
        let rate = |text| RateLimit::parse(text).map(|rate| rate.to_string());
        assert_eq!(rate("50"), Ok("50/s".to_string()));
        assert_eq!(rate("50/s"), Ok("50/s".to_string()));
        assert_eq!(rate("600/min"), Ok("600/min".to_string()));
        assert!(rate("0").unwrap_err().contains("from 1"));
        assert!(rate("5/h").unwrap_err().contains("N/min"));
    }

    #[test]
    fn clients_are_told_apart_by_valid_token_then_address() {
        let metrics = Arc::new(Metrics::default());
        let auth = BearerAuth::new(Some("secret"), metrics);
        let request = |authorization: Option<&str>, address: &str| {
            let mut request = Request::new(Body::empty());
            if let Some(value) = authorization {
                request
                    .headers_mut()
                    .insert(header::AUTHORIZATION, value.parse().unwrap());
            }
            let info = TcpConnectInfo {
                local_addr: None,
                remote_addr: Some(address.parse().unwrap()),
            };
            request.extensions_mut().insert(info);
            request
        };
        let token = client_of(&request(Some("Bearer secret"), "10.0.0.1:1"), &auth);
        assert!(matches!(token, Client::Token(_)));
        assert_eq!(
            token,
            client_of(&request(Some("Bearer secret"), "10.0.0.2:1"), &auth)
        );
        // A wrong token is no client of its own: its address is.
        let wrong = client_of(&request(Some("Bearer guess"), "10.0.0.1:1"), &auth);
        assert_eq!(wrong, client_of(&request(None, "10.0.0.1:2"), &auth));
        // One IPv6 /64 is one client.
        assert_eq!(
            client_of(&request(None, "[2001:db8::1]:1"), &auth),
            client_of(&request(None, "[2001:db8::ffff:1]:1"), &auth)
        );
        assert_ne!(
            client_of(&request(None, "[2001:db8::1]:1"), &auth),
            client_of(&request(None, "[2001:db8:0:1::1]:1"), &auth)
        );
    }
}
