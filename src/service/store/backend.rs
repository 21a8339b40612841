//! What every backend shares: the ids it is given, its errors, and the trait of the byte
//! backends (files, Redis).

use std::fmt;
use std::future::Future;
use std::io::{Cursor, Read};
use std::pin::Pin;

use super::encode::EncodedGraph;

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

/// An entry as a byte backend gives it back: `len` bytes, unverified, for
/// [`super::decode_sync`] to read once, straight into the graph's arrays (the entry is never
/// copied whole into memory first).
pub struct StoredBytes {
    reader: Box<dyn Read + Send>,
    len: u64,
    backend: &'static str,
}

impl StoredBytes {
    /// The `len` bytes `reader` gives (it is read no further), from the backend `backend`
    /// (its kind, for errors while reading).
    pub fn new(reader: impl Read + Send + 'static, len: u64, backend: &'static str) -> Self {
        Self {
            reader: Box::new(reader),
            len,
            backend,
        }
    }

    /// Bytes already in memory.
    pub fn from_vec(bytes: Vec<u8>, backend: &'static str) -> Self {
        let len = bytes.len() as u64;
        Self::new(Cursor::new(bytes), len, backend)
    }

    /// How many bytes the entry has.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the entry has no bytes (a corrupt one).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn backend(&self) -> &'static str {
        self.backend
    }

    pub(crate) fn into_reader(self) -> Box<dyn Read + Send> {
        self.reader
    }
}

impl fmt::Debug for StoredBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredBytes")
            .field("len", &self.len)
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

/// A storage backend outside the process (files, Redis): encoded graphs (opaque bytes) by
/// id. Writing an id that exists replaces its entry (the content is the same, unless the old
/// entry was corrupt).
pub trait Backend: Send + Sync + fmt::Debug {
    /// The backend's kind, for logs and errors: `dir` or `redis`.
    fn kind(&self) -> &'static str;

    /// Stores `graph` under `id`, writing its stored form in pieces (never whole in memory);
    /// once this returns `Ok`, every reader sees the whole entry.
    fn put<'a>(&'a self, id: &'a GraphId, graph: EncodedGraph) -> StoreFuture<'a, ()>;

    /// The entry stored under `id`, or `None` when there is none (never stored, expired).
    fn get<'a>(&'a self, id: &'a GraphId) -> StoreFuture<'a, Option<StoredBytes>>;
}
