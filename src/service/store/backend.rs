//! What every backend shares: the ids it is given, its errors, and the trait of the byte
//! backends (files, Redis).

use std::fmt;
use std::future::Future;
use std::pin::Pin;

/// A boxed future of a store operation (the backends are used as trait objects).
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why a store operation failed. `Clone` so that one failure can reach every request that
/// waited for the same graph.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The backend could not be reached or failed (I/O, Redis down or full): retry later.
    #[error("graph store ({backend}) unavailable: {detail}")]
    Unavailable {
        /// The backend's kind, as `--store-*` names it.
        backend: &'static str,
        /// What failed, with the backend's own message.
        detail: String,
    },
    /// A stored entry failed its checks; it is never served. Uploading the graph again
    /// replaces it.
    #[error("graph {id} in the store is corrupt ({reason}); upload it again with PutGraph")]
    Corrupt {
        /// The content id asked for.
        id: String,
        /// Which check failed.
        reason: String,
    },
}

impl StoreError {
    pub(crate) fn unavailable(backend: &'static str, detail: impl fmt::Display) -> Self {
        Self::Unavailable {
            backend,
            detail: detail.to_string(),
        }
    }

    pub(crate) fn corrupt(id: &GraphId, reason: impl fmt::Display) -> Self {
        Self::Corrupt {
            id: id.as_str().to_string(),
            reason: reason.to_string(),
        }
    }
}

/// A well-formed content id: 64 lowercase hex digits (the SHA-256 the registry computes).
/// Backends only ever see these, so a client's id can never name a path or a foreign key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GraphId(String);

impl GraphId {
    /// The id if `text` is 64 lowercase hex digits, else `None` (no such graph can exist).
    pub fn parse(text: &str) -> Option<Self> {
        let well_formed = text.len() == 64
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        well_formed.then(|| Self(text.to_string()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for GraphId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A storage backend outside the process (files, Redis): encoded graphs (opaque bytes) by
/// id. Writing an id that exists replaces its entry (the content is the same, unless the old
/// entry was corrupt).
pub trait Backend: Send + Sync + fmt::Debug {
    /// The backend's kind, for logs and errors: `dir` or `redis`.
    fn kind(&self) -> &'static str;

    /// Stores `encoded` under `id`; once this returns `Ok`, every reader sees the whole entry.
    fn put<'a>(&'a self, id: &'a GraphId, encoded: Vec<u8>) -> StoreFuture<'a, ()>;

    /// The bytes stored under `id`, or `None` when there are none (never stored, expired).
    fn get<'a>(&'a self, id: &'a GraphId) -> StoreFuture<'a, Option<Vec<u8>>>;
}
