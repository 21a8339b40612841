//! Bearer-token authentication: the server-side interceptor.
//!
//! The token is compared in constant time: both the expected and the presented token are
//! hashed with SHA-256 and the digests compared with `subtle`, so neither the content nor the
//! length of the expected token leaks through timing.

use std::sync::Arc;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tonic::service::Interceptor;
use tonic::{Request, Status};

use super::error::ServiceError;
use super::metrics::Metrics;

/// Checks `authorization: Bearer <token>` on every call of the services it wraps. Without an
/// expected token every call passes.
#[derive(Debug, Clone)]
pub(crate) struct BearerAuth {
    expected_digest: Option<[u8; 32]>,
    metrics: Arc<Metrics>,
}

impl BearerAuth {
    /// `token`: the expected token, or None to accept every call.
    pub(crate) fn new(token: Option<&str>, metrics: Arc<Metrics>) -> Self {
        Self {
            expected_digest: token.map(|t| Sha256::digest(t.as_bytes()).into()),
            metrics,
        }
    }

    /// Whether calls must carry a token.
    pub(crate) fn requires_token(&self) -> bool {
        self.expected_digest.is_some()
    }

    /// Ok when the call carries the expected token (or no token is required).
    pub(crate) fn check(&self, authorization: Option<&[u8]>) -> Result<(), ServiceError> {
        let Some(expected) = &self.expected_digest else {
            return Ok(());
        };
        let Some(presented) = authorization.and_then(bearer_token) else {
            return Err(ServiceError::Unauthenticated(
                "missing bearer token: send the metadata `authorization: Bearer <token>`",
            ));
        };
        let presented: [u8; 32] = Sha256::digest(presented).into();
        if bool::from(presented.ct_eq(expected)) {
            Ok(())
        } else {
            Err(ServiceError::Unauthenticated("invalid bearer token"))
        }
    }
}

impl Interceptor for BearerAuth {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let authorization = request
            .metadata()
            .get("authorization")
            .map(|value| value.as_bytes());
        match self.check(authorization) {
            Ok(()) => Ok(request),
            Err(error) => {
                self.metrics.auth_failures.inc();
                Err(error.into())
            }
        }
    }
}

/// The token of an `authorization` value "Bearer <token>" (scheme case-insensitive).
fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    const SCHEME: &[u8] = b"bearer ";
    if value.len() > SCHEME.len() && value[..SCHEME.len()].eq_ignore_ascii_case(SCHEME) {
        Some(value[SCHEME.len()..].trim_ascii())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked() {
        let auth = BearerAuth::new(Some("s3cret"), Arc::new(Metrics::new()));
        assert!(auth.check(Some(b"Bearer s3cret")).is_ok());
        assert!(auth.check(Some(b"bearer s3cret")).is_ok());
        assert!(auth.check(Some(b"Bearer s3cre")).is_err());
        assert!(auth.check(Some(b"Bearer s3cret2")).is_err());
        assert!(auth.check(Some(b"Basic s3cret")).is_err());
        assert!(auth.check(Some(b"s3cret")).is_err());
        assert!(auth.check(None).is_err());
        let open = BearerAuth::new(None, Arc::new(Metrics::new()));
        assert!(open.check(None).is_ok());
    }
}
