//! The shared backend: a Redis server that every replica uses, so a graph registered through
//! one replica is evaluable by id on all of them.
//!
//! A graph of `N` encoded bytes is kept in `ceil(N / chunk)` string keys
//! `grundy:graph:<id>:<i>` of at most [`CHUNK_BYTES`] each (far below Redis's 512 MB value
//! limit, and small enough not to stall the server), then a manifest key
//! `grundy:graph:<id>` holding `grundy-graph/1 bytes=N chunks=K chunk_bytes=C`. The manifest
//! is written last, after every chunk was acknowledged, so a reader that finds it finds a
//! whole graph; concurrent writers of one id write identical bytes (the id is the content's
//! hash), so they cannot mix two graphs. With a TTL the chunks live a margin longer than the
//! manifest, so a graph never expires under a reader's feet; without one, entries stay until
//! deleted (run Redis with `maxmemory-policy noeviction`, see docs/deploying.md).
//!
//! What Redis holds is not trusted: a manifest announcing more bytes than the largest graph
//! the server accepts, or chunks larger than Redis can hold, is corrupt (never allocated),
//! and the graph is read into memory as its chunks arrive, never reserved up front.
//!
//! Redis is connected to lazily and reconnected after failures (the `redis` crate's
//! connection manager): when it is down, store operations fail fast with
//! [`StoreError::Unavailable`] naming the address, and everything else keeps working.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::backend::{Backend, GraphId, StoreError, StoreFuture, StoredBytes};
use super::encode::EncodedGraph;

const KIND: &str = "redis";
/// Largest value written: 16 MiB.
pub(crate) const CHUNK_BYTES: usize = 16 << 20;
const KEY_PREFIX: &str = "grundy:graph:";
const MANIFEST_TAG: &str = "grundy-graph/1";
/// Redis's own limit on a string value: no chunk can be larger.
const MAX_CHUNK_BYTES: usize = 512 << 20;
/// How much longer than the manifest the chunks live (with a TTL).
const CHUNK_TTL_MARGIN: Duration = Duration::from_secs(10 * 60);

/// Graphs in Redis. Cheap to clone (the connection manager is a handle).
#[derive(Clone)]
pub struct RedisStore {
    connection: ConnectionManager,
    /// `host:port` (never the URL: it may carry a password).
    address: String,
    ttl: Option<Duration>,
    chunk_bytes: usize,
    /// Largest entry read back; a manifest announcing more is corrupt.
    max_entry_bytes: usize,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("address", &self.address)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// A store on the Redis at `url` (`redis://[:PASSWORD@]HOST[:PORT][/DB]`), entries
    /// expiring `ttl` after their last write, entries of more than `max_entry_bytes` refused
    /// as corrupt. Only the URL is checked here: the connection is made on first use.
    pub fn open(
        url: &str,
        ttl: Option<Duration>,
        max_entry_bytes: usize,
    ) -> Result<Self, StoreError> {
        Ok(Self::with_chunk_bytes(url, ttl, CHUNK_BYTES)?.with_max_entry_bytes(max_entry_bytes))
    }

    /// Like [`RedisStore::open`] with another chunk size (tests use small ones to split
    /// small graphs).
    pub fn with_chunk_bytes(
        url: &str,
        ttl: Option<Duration>,
        chunk_bytes: usize,
    ) -> Result<Self, StoreError> {
        let client = redis::Client::open(url)
            .map_err(|e| StoreError::unavailable(KIND, format!("invalid --store-url: {e}")))?;
        let address = client.get_connection_info().addr().to_string();
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(10)))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50));
        let connection = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(|e| StoreError::unavailable(KIND, e))?;
        Ok(Self {
            connection,
            address,
            ttl,
            chunk_bytes: chunk_bytes.clamp(1, MAX_CHUNK_BYTES),
            max_entry_bytes: usize::MAX,
        })
    }

    /// The same store, refusing entries of more than `max_entry_bytes` as corrupt.
    pub fn with_max_entry_bytes(mut self, max_entry_bytes: usize) -> Self {
        self.max_entry_bytes = max_entry_bytes;
        self
    }

    fn failed(&self, error: redis::RedisError) -> StoreError {
        StoreError::unavailable(KIND, format!("Redis at {}: {error}", self.address))
    }

    /// `SET key value [PX ttl]`.
    fn set_command(key: &str, value: &[u8], ttl: Option<Duration>) -> redis::Cmd {
        let mut command = redis::cmd("SET");
        command.arg(key).arg(value);
        if let Some(ttl) = ttl {
            command.arg("PX").arg(ttl.as_millis().max(1) as u64);
        }
        command
    }

    async fn write(&self, id: &GraphId, graph: EncodedGraph) -> Result<(), StoreError> {
        let mut connection = self.connection.clone();
        let chunk_ttl = self.ttl.map(|ttl| ttl + CHUNK_TTL_MARGIN);
        let bytes = graph.len();
        let count = bytes.div_ceil(self.chunk_bytes);
        // One chunk at a time, encoded as it is sent: the server holds one chunk (and the
        // client's copy of it), not a copy of the graph. Encoding a chunk costs about what
        // copying it into the connection's buffer does, so it stays on this task.
        let mut chunk = Vec::new();
        for index in 0..count {
            let start = index * self.chunk_bytes;
            chunk.clear();
            graph.write_range(start..(start + self.chunk_bytes).min(bytes), &mut chunk);
            Self::set_command(&chunk_key(id, index), &chunk, chunk_ttl)
                .exec_async(&mut connection)
                .await
                .map_err(|e| self.failed(e))?;
        }
        let manifest = format!(
            "{MANIFEST_TAG} bytes={bytes} chunks={count} chunk_bytes={}",
            self.chunk_bytes
        );
        Self::set_command(&manifest_key(id), manifest.as_bytes(), self.ttl)
            .exec_async(&mut connection)
            .await
            .map_err(|e| self.failed(e))
    }

    async fn read(&self, id: &GraphId) -> Result<Option<StoredBytes>, StoreError> {
        let mut connection = self.connection.clone();
        let manifest: Option<String> = redis::cmd("GET")
            .arg(manifest_key(id))
            .query_async(&mut connection)
            .await
            .map_err(|e| self.failed(e))?;
        let Some(manifest) = manifest else {
            return Ok(None);
        };
        let layout = Layout::parse(&manifest, self.max_entry_bytes).map_err(|why| {
            let excerpt: String = manifest.chars().take(80).collect();
            StoreError::corrupt(id, format!("manifest {excerpt:?}: {why}"))
        })?;
        // Only bytes Redis actually sent are ever allocated. The decoder frees each chunk
        // once read, so the graph is not in memory twice.
        let mut chunks = Chunks::default();
        for index in 0..layout.chunks {
            let chunk: Option<Vec<u8>> = redis::cmd("GET")
                .arg(chunk_key(id, index))
                .query_async(&mut connection)
                .await
                .map_err(|e| self.failed(e))?;
            let Some(chunk) = chunk else {
                // Deleted or evicted behind grundy's back: as good as never stored.
                tracing::warn!(graph_id = %id, index, "graph chunk missing in Redis; treating the graph as unknown");
                return Ok(None);
            };
            let expected = layout.chunk_len(index);
            if chunk.len() != expected {
                return Err(StoreError::corrupt(
                    id,
                    format!(
                        "chunk {index} has {} bytes, expected {expected}",
                        chunk.len()
                    ),
                ));
            }
            chunks.queue.push_back(chunk);
        }
        Ok(Some(StoredBytes::new(chunks, layout.bytes as u64, KIND)))
    }
}

/// The chunks of an entry as one reader, each dropped once read.
#[derive(Default)]
struct Chunks {
    queue: VecDeque<Vec<u8>>,
    /// Bytes of the front chunk already read.
    at: usize,
}

impl Read for Chunks {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while let Some(front) = self.queue.front() {
            if self.at < front.len() {
                let count = out.len().min(front.len() - self.at);
                out[..count].copy_from_slice(&front[self.at..self.at + count]);
                self.at += count;
                return Ok(count);
            }
            self.queue.pop_front();
            self.at = 0;
        }
        Ok(0)
    }
}

impl Backend for RedisStore {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn put<'a>(&'a self, id: &'a GraphId, graph: EncodedGraph) -> StoreFuture<'a, ()> {
        Box::pin(self.write(id, graph))
    }

    fn get<'a>(&'a self, id: &'a GraphId) -> StoreFuture<'a, Option<StoredBytes>> {
        Box::pin(self.read(id))
    }
}

fn manifest_key(id: &GraphId) -> String {
    format!("{KEY_PREFIX}{id}")
}

fn chunk_key(id: &GraphId, index: usize) -> String {
    format!("{KEY_PREFIX}{id}:{index}")
}

/// A parsed manifest.
#[derive(Debug, PartialEq, Eq)]
struct Layout {
    bytes: usize,
    chunks: usize,
    chunk_bytes: usize,
}

impl Layout {
    /// The layout a manifest announces, or why it is refused: malformed, inconsistent, or
    /// larger than `max_bytes` (the sizes come from outside the process and are not trusted).
    fn parse(manifest: &str, max_bytes: usize) -> Result<Self, String> {
        let malformed = || "unreadable".to_string();
        let mut fields = manifest.split(' ');
        if fields.next() != Some(MANIFEST_TAG) {
            return Err(malformed());
        }
        let mut number = |name: &str| -> Result<usize, String> {
            fields
                .next()
                .and_then(|field| field.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
                .ok_or_else(malformed)
        };
        let layout = Self {
            bytes: number("bytes")?,
            chunks: number("chunks")?,
            chunk_bytes: number("chunk_bytes")?,
        };
        if fields.next().is_some() {
            return Err(malformed());
        }
        if layout.bytes > max_bytes {
            return Err(format!(
                "announces {} bytes, more than the largest graph this server accepts \
                 ({max_bytes} bytes, from --max-vertices and --max-edges)",
                layout.bytes
            ));
        }
        if layout.chunk_bytes == 0 || layout.chunk_bytes > MAX_CHUNK_BYTES {
            return Err(format!(
                "chunks of {} bytes (1 to {MAX_CHUNK_BYTES} expected)",
                layout.chunk_bytes
            ));
        }
        if layout.chunks != layout.bytes.div_ceil(layout.chunk_bytes) {
            return Err("its chunk count does not match its sizes".into());
        }
        Ok(layout)
    }

    fn chunk_len(&self, index: usize) -> usize {
        (self.bytes - index * self.chunk_bytes).min(self.chunk_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::store::decode::tests::{get_game, put_game, same_game, sample_games};
    use crate::service::store::{GraphStore, StoredGraph, decode_sync};
    use std::sync::Arc;

    /// The URL of the test Redis that scripts/with-redis.sh starts; the tests that need one
    /// are ignored by a plain `cargo test` and run by `scripts/fleet-test.sh`.
    fn test_url() -> String {
        std::env::var("GRUNDY_TEST_REDIS_URL")
            .expect("GRUNDY_TEST_REDIS_URL: run under scripts/with-redis.sh")
    }

    fn open(url: &str, chunk_bytes: usize) -> GraphStore {
        GraphStore::from_backend(Arc::new(
            RedisStore::with_chunk_bytes(url, Some(Duration::from_secs(600)), chunk_bytes)
                .expect("a valid URL"),
        ))
    }

    #[test]
    fn manifests_parse_strictly() {
        let good = Layout::parse("grundy-graph/1 bytes=10 chunks=3 chunk_bytes=4", 10).unwrap();
        assert_eq!((good.chunk_len(0), good.chunk_len(2)), (4, 2));
        for bad in [
            "grundy-graph/2 bytes=10 chunks=3 chunk_bytes=4",
            "grundy-graph/1 bytes=10 chunks=2 chunk_bytes=4",
            "grundy-graph/1 bytes=10 chunks=3 chunk_bytes=0",
            "grundy-graph/1 bytes=10 chunks=3",
            "grundy-graph/1 bytes=10 chunks=3 chunk_bytes=4 extra",
        ] {
            assert!(Layout::parse(bad, usize::MAX).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_manifest_announcing_more_than_the_largest_graph_is_refused_before_any_allocation() {
        let max = crate::service::store::max_encoded_bytes(
            crate::service::DEFAULT_MAX_VERTICES,
            crate::service::DEFAULT_MAX_EDGES,
        );
        for (manifest, why) in [
            (
                "grundy-graph/1 bytes=40000000000 chunks=1 chunk_bytes=40000000000",
                "announces 40000000000 bytes",
            ),
            (
                "grundy-graph/1 bytes=18446744073709551615 chunks=1 chunk_bytes=18446744073709551615",
                "more than the largest graph",
            ),
            (
                "grundy-graph/1 bytes=100 chunks=1 chunk_bytes=40000000000",
                "chunks of 40000000000 bytes",
            ),
        ] {
            let error = Layout::parse(manifest, max).expect_err(manifest);
            assert!(error.contains(why), "{manifest}: {error}");
        }
        assert!(Layout::parse("grundy-graph/1 bytes=11 chunks=3 chunk_bytes=4", 10).is_err());
    }

    #[tokio::test]
    #[ignore = "needs Redis: scripts/fleet-test.sh runs it"]
    async fn round_trips_in_chunks_and_survives_reopening() {
        let url = test_url();
        for (id, game) in sample_games() {
            // 7-byte chunks: even these small graphs span several keys.
            put_game(&open(&url, 7), &id, &game).await.expect("stored");
        }
        let reopened = open(&url, 7);
        for (id, game) in sample_games() {
            let found = get_game(&reopened, &id)
                .await
                .expect("valid")
                .expect("present");
            assert!(same_game(&found, &game));
        }
    }

    #[tokio::test]
    #[ignore = "needs Redis: scripts/fleet-test.sh runs it"]
    async fn a_damaged_chunk_is_refused() {
        let url = test_url();
        let store = open(&url, 7);
        let (id, game) = sample_games().remove(1);
        put_game(&store, &id, &game).await.expect("stored");
        let mut connection = redis::Client::open(url.as_str())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .expect("Redis reachable");
        // Same length, other bytes: only the content check can tell.
        let _: () = redis::cmd("SET")
            .arg(chunk_key(&id, 2))
            .arg(b"XXXXXXX".as_slice())
            .query_async(&mut connection)
            .await
            .unwrap();
        let Some(StoredGraph::Encoded(bytes)) = store.get(&id).await.expect("readable") else {
            panic!("expected the stored bytes");
        };
        assert!(matches!(
            decode_sync(&id, bytes),
            Err(StoreError::Corrupt { .. })
        ));
        // A chunk of the wrong length is caught before decoding.
        let _: () = redis::cmd("SET")
            .arg(chunk_key(&id, 1))
            .arg(b"short".as_slice())
            .query_async(&mut connection)
            .await
            .unwrap();
        let error = store.get(&id).await.expect_err("refused");
        assert!(error.to_string().contains("chunk 1 has 5 bytes"), "{error}");
        // A missing chunk makes the graph unknown, not an error.
        let _: () = redis::cmd("DEL")
            .arg(chunk_key(&id, 0))
            .query_async(&mut connection)
            .await
            .unwrap();
        assert!(matches!(store.get(&id).await, Ok(None)));
    }

    #[tokio::test]
    #[ignore = "needs Redis: scripts/fleet-test.sh runs it"]
    async fn a_forged_huge_manifest_reads_as_a_corrupt_entry() {
        let url = test_url();
        let store = GraphStore::from_backend(Arc::new(
            RedisStore::open(&url, Some(Duration::from_secs(600)), 1 << 20).expect("a valid URL"),
        ));
        let mut connection = redis::Client::open(url.as_str())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .expect("Redis reachable");
        let id = GraphId::parse(&"e".repeat(64)).unwrap();
        for bytes in ["40000000000", "18446744073709551615"] {
            let manifest = format!("{MANIFEST_TAG} bytes={bytes} chunks=1 chunk_bytes={bytes}");
            let _: () = redis::cmd("SET")
                .arg(manifest_key(&id))
                .arg(manifest)
                .arg("PX")
                .arg(60_000)
                .query_async(&mut connection)
                .await
                .unwrap();
            let error = store.get(&id).await.expect_err("refused");
            assert!(matches!(error, StoreError::Corrupt { .. }), "{error}");
            assert!(error.to_string().contains("announces"), "{error}");
        }
    }

    #[tokio::test]
    async fn an_unreachable_redis_is_unavailable() {
        // A port nobody listens on: bind one, then free it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let store = open(&format!("redis://127.0.0.1:{port}"), CHUNK_BYTES);
        let (id, game) = sample_games().remove(0);
        let error = put_game(&store, &id, &game).await.expect_err("no Redis");
        let text = error.to_string();
        assert!(matches!(error, StoreError::Unavailable { .. }), "{text}");
        assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
        assert!(store.get(&id).await.is_err());
    }
}
