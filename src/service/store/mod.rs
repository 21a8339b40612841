//! The graph store behind the registry: validated graphs kept by their content id, so that an
//! id registered with `PutGraph` can be evaluated later, on this replica or (with a shared
//! backend) on any other. The registry's cache of analysed graphs stays in front of it: on a
//! cache miss by id, the graph is loaded from here, verified (when it comes as bytes), analysed
//! and cached.
//!
//! Backends: [`memory`] (the default: in process, bounded, lost on restart), [`dir`] (durable
//! files on one machine) and [`redis`] (shared by every replica). The dir and Redis backends
//! store opaque bytes, written a piece at a time by [`encode`] (the dir backend on the
//! blocking pool with its file I/O, Redis one chunk at a time as it sends it) and read back
//! by [`decode`], which the caller runs on its work pool: it reads a file there, straight
//! into the graph's arrays, and verifies the graph against its id. The memory backend
//! keeps the validated game itself, shared with the analysis the registry caches: a graph
//! held by both costs its memory once (an encoded copy beside it doubled the server's
//! memory for a big graph), and as it never leaves the process there is nothing to encode
//! or verify.

mod backend;
mod decode;
mod dir;
mod encode;
mod memory;
mod redis;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use backend::{Backend, GraphId, StoreError, StoreFuture, StoredBytes};
pub use decode::decode_sync;
pub use dir::DirStore;
pub use encode::{EncodedGraph, max_encoded_bytes};
pub use memory::MemoryStore;
pub use redis::RedisStore;

use crate::engine::Game;

/// Which byte backend to use, from `grundy-server`'s flags (without either flag, the server
/// keeps its graphs in memory: [`GraphStore::memory`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// Files under `path`, durable across restarts.
    Dir {
        /// The store's directory (created if missing).
        path: PathBuf,
    },
    /// A Redis server shared by every replica.
    Redis {
        /// `redis://[:PASSWORD@]HOST[:PORT][/DB]`.
        url: String,
        /// Expiry of an entry after its last `PutGraph`; `None` keeps entries.
        ttl: Option<Duration>,
    },
}

/// The form of `--store-url`, for its errors.
pub const REDIS_URL_FORM: &str = "redis://HOST:PORT/DB (e.g. redis://127.0.0.1:6379/0; with a \
     password, redis://:PASSWORD@HOST:PORT/DB)";

/// Why `url` is no `--store-url` this build can use, with the form it takes. The URL itself is
/// not repeated (it may hold a password), only its scheme, cut short.
pub fn check_redis_url(url: &str) -> Result<(), String> {
    match url.split_once("://").map(|(scheme, _)| scheme) {
        // redis+unix:// and unix:// name a Unix socket, which the client supports too.
        Some("redis" | "redis+unix" | "unix") => {}
        Some("rediss") => {
            return Err(format!(
                "rediss:// (Redis over TLS) is not supported by this build: use {REDIS_URL_FORM}"
            ));
        }
        Some(scheme) => {
            let shown: String = scheme.chars().take(16).collect();
            let shown = if shown
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            {
                format!("{shown}://")
            } else {
                "not a URL scheme".to_string()
            };
            return Err(format!(
                "its scheme is {shown}, and it must be a Redis URL: {REDIS_URL_FORM}"
            ));
        }
        None => return Err(format!("it has no scheme: write {REDIS_URL_FORM}")),
    }
    // The client's parse: no connection is made.
    ::redis::Client::open(url)
        .map(drop)
        .map_err(|e| format!("{e}: write {REDIS_URL_FORM}"))
}

/// A graph as the store gives it back.
#[derive(Debug)]
pub enum StoredGraph {
    /// The validated game itself (the memory backend): it never left this process, so there
    /// is nothing to verify.
    Game(Arc<Game>),
    /// Bytes from outside the process (a file, Redis), unverified: pass them to
    /// [`decode_sync`].
    Encoded(StoredBytes),
}

/// The graph store: a cheap handle to one backend.
#[derive(Debug, Clone)]
pub struct GraphStore {
    backend: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    /// Games in this process.
    Memory(memory::MemoryStore),
    /// Encoded graphs outside it.
    Bytes(Arc<dyn Backend>),
}

impl GraphStore {
    /// Opens the configured byte backend: creates the directory, or parses the Redis URL (Redis
    /// itself is connected to lazily, so the server starts and serves inline graphs while
    /// Redis is down). The backend's bytes are not trusted: an entry announcing more than
    /// `max_entry_bytes` (see `max_encoded_bytes`) is corrupt and is never allocated.
    pub fn open(config: &StoreConfig, max_entry_bytes: usize) -> Result<Self, StoreError> {
        let backend = match config {
            StoreConfig::Dir { path } => {
                Arc::new(dir::DirStore::open(path, max_entry_bytes)?) as Arc<dyn Backend>
            }
            StoreConfig::Redis { url, ttl } => {
                Arc::new(redis::RedisStore::open(url, *ttl, max_entry_bytes)?)
            }
        };
        Ok(Self::from_backend(backend))
    }

    /// A store over `store` (a handle: clones of it see the same entries).
    pub fn memory(store: memory::MemoryStore) -> Self {
        Self {
            backend: Kind::Memory(store),
        }
    }

    /// A store over any byte backend (tests wrap backends to inject failures).
    pub fn from_backend(backend: Arc<dyn Backend>) -> Self {
        Self {
            backend: Kind::Bytes(backend),
        }
    }

    /// The backend's kind: `memory`, `dir` or `redis`.
    pub fn kind(&self) -> &'static str {
        match &self.backend {
            Kind::Memory(_) => memory::KIND,
            Kind::Bytes(backend) => backend.kind(),
        }
    }

    /// Stores `game` under its id. The memory backend keeps the game itself (shared, no
    /// copy); the others write its stored form (see [`EncodedGraph`]) a piece at a time.
    pub async fn put(&self, id: &GraphId, game: &Arc<Game>) -> Result<(), StoreError> {
        match &self.backend {
            Kind::Memory(store) => {
                store.insert(id, game.clone());
                Ok(())
            }
            Kind::Bytes(backend) => backend.put(id, EncodedGraph::new(game.clone())).await,
        }
    }

    /// The graph stored under `id`, or `None` when there is none (never stored, dropped,
    /// expired). Encoded bytes are unverified: see [`StoredGraph::Encoded`].
    pub async fn get(&self, id: &GraphId) -> Result<Option<StoredGraph>, StoreError> {
        match &self.backend {
            Kind::Memory(store) => Ok(store.get(id).map(StoredGraph::Game)),
            Kind::Bytes(backend) => Ok(backend.get(id).await?.map(StoredGraph::Encoded)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_url_of_another_form_is_refused_with_the_form_to_write() {
        for url in [
            "redis://127.0.0.1:6379/0",
            "redis://:s3cret@redis.example:6380/2",
            "redis://localhost",
            "unix:///run/redis.sock",
        ] {
            assert_eq!(check_redis_url(url), Ok(()), "{url}");
        }
        for (url, said) in [
            ("http://127.0.0.1:6379", "its scheme is http://"),
            ("localhost:6379", "it has no scheme"),
            (
                "rediss://127.0.0.1:6379/0",
                "rediss:// (Redis over TLS) is not supported",
            ),
            ("redis://127.0.0.1:6379/x", "Invalid database number"),
            ("redis://", "Missing hostname"),
        ] {
            let error = check_redis_url(url).unwrap_err();
            assert!(error.contains(said), "{url}: {error}");
            assert!(error.contains("redis://HOST:PORT/DB"), "{url}: {error}");
        }
        // The URL is not repeated (it may hold a password), nor a long scheme.
        let error = check_redis_url("http://:s3cret@127.0.0.1:6379").unwrap_err();
        assert!(!error.contains("s3cret"), "{error}");
        let long = format!("{}://host", "x".repeat(1000));
        assert!(check_redis_url(&long).unwrap_err().len() < 300);
    }
}
