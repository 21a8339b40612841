//! The durable single-machine backend: one file per graph, named by its content id, under
//! `DIR/graphs/<first two hex digits>/<id>`.
//!
//! A write goes to a temporary file in the entry's own directory, is fsynced, renamed over
//! the entry's name and the directory is fsynced: a crash (kill -9, power loss) at any point
//! leaves either the old entry or the whole new one, never half of one, and an entry whose
//! write returned survives a restart. Temporary files a crash left behind are never read as
//! entries and are removed when the store is next opened. Reads are verified by the decoder
//! against the id (see [`super::decode`]); a file larger than the largest graph the server
//! accepts is corrupt and is not read at all (its size is not trusted to allocate).

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use super::backend::{Backend, GraphId, StoreError, StoreFuture, StoredBytes};
use super::encode::EncodedGraph;

const KIND: &str = "dir";
/// Marks temporary files: `.<id>.tmp-<pid>-<n>`.
const TEMP_MARK: &str = ".tmp-";
/// Temporary files older than this are a crash's leftovers (a live write takes seconds).
const STALE_TEMP_AGE: Duration = Duration::from_secs(15 * 60);

/// Graph files in a directory. Cheap to clone (a handle).
#[derive(Debug, Clone)]
pub struct DirStore {
    files: Arc<Files>,
}

#[derive(Debug)]
struct Files {
    graphs: PathBuf,
    /// Largest entry read; a larger file is corrupt.
    max_entry_bytes: usize,
    /// Makes temporary names unique within the process (the pid makes them unique across).
    next_temp: AtomicU64,
}

impl DirStore {
    /// Opens (creating if needed) the store in `path` and sweeps stale temporary files; files
    /// of more than `max_entry_bytes` are refused as corrupt.
    pub fn open(path: &Path, max_entry_bytes: usize) -> Result<Self, StoreError> {
        let graphs = path.join("graphs");
        fs::create_dir_all(&graphs).map_err(|e| io_error("cannot create", &graphs, e))?;
        let removed = sweep_stale_temps(&graphs);
        if removed > 0 {
            tracing::info!(removed, dir = %graphs.display(), "removed temporary files of interrupted writes");
        }
        Ok(Self {
            files: Arc::new(Files {
                graphs,
                max_entry_bytes,
                next_temp: AtomicU64::new(0),
            }),
        })
    }
}

impl Files {
    /// The file of `id`, and its directory.
    fn entry_path(&self, id: &GraphId) -> (PathBuf, PathBuf) {
        let shard = self.graphs.join(&id.as_str()[..2]);
        let file = shard.join(id.as_str());
        (shard, file)
    }

    fn write_sync(&self, id: &GraphId, graph: &EncodedGraph) -> Result<(), StoreError> {
        let (shard, file) = self.entry_path(id);
        if !shard.is_dir() {
            fs::create_dir_all(&shard).map_err(|e| io_error("cannot create", &shard, e))?;
            // The new directory's name must be durable before an entry in it can be.
            sync_dir(&self.graphs)?;
        }
        let serial = self.next_temp.fetch_add(1, Ordering::Relaxed);
        let temp = shard.join(format!(".{id}{TEMP_MARK}{}-{serial}", std::process::id()));
        let written = (|| {
            let mut out = File::create_new(&temp)?;
            graph.write_to(&mut out)?;
            out.sync_all()
        })();
        if let Err(e) = written.and_then(|()| fs::rename(&temp, &file)) {
            let _ = fs::remove_file(&temp);
            return Err(io_error("cannot write", &file, e));
        }
        sync_dir(&shard)
    }

    /// The entry of `id`, opened (the decoder reads it).
    fn read_sync(&self, id: &GraphId) -> Result<Option<StoredBytes>, StoreError> {
        let (_, file) = self.entry_path(id);
        let entry = match File::open(&file) {
            Ok(entry) => entry,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("cannot read", &file, e)),
        };
        let size = entry
            .metadata()
            .map_err(|e| io_error("cannot read", &file, e))?
            .len();
        if size > self.max_entry_bytes as u64 {
            return Err(StoreError::corrupt(
                id,
                format!(
                    "its file has {size} bytes, more than the largest graph this server \
                     accepts ({} bytes, from --max-vertices and --max-edges)",
                    self.max_entry_bytes
                ),
            ));
        }
        // Read no further than this size even if the file grows meanwhile (a write replaces
        // the file by a rename: this handle keeps the entry it opened).
        Ok(Some(StoredBytes::new(entry, size, KIND)))
    }
}

impl Backend for DirStore {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn put<'a>(&'a self, id: &'a GraphId, graph: EncodedGraph) -> StoreFuture<'a, ()> {
        let (files, id) = (self.files.clone(), id.clone());
        Box::pin(blocking(move || files.write_sync(&id, &graph)))
    }

    fn get<'a>(&'a self, id: &'a GraphId) -> StoreFuture<'a, Option<StoredBytes>> {
        let (files, id) = (self.files.clone(), id.clone());
        Box::pin(blocking(move || files.read_sync(&id)))
    }
}

/// Runs file I/O on the blocking pool: fsync of a large file takes long enough to stall a
/// runtime worker.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StoreError::unavailable(KIND, format!("the I/O task failed: {e}")))?
}

fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error("cannot sync", dir, e))
}

fn io_error(what: &str, path: &Path, error: io::Error) -> StoreError {
    StoreError::unavailable(KIND, format!("{what} {}: {error}", path.display()))
}

/// Removes temporary files older than [`STALE_TEMP_AGE`]; returns how many.
fn sweep_stale_temps(graphs: &Path) -> usize {
    let now = SystemTime::now();
    let Ok(shards) = fs::read_dir(graphs) else {
        return 0;
    };
    let mut removed = 0;
    for shard in shards.flatten() {
        let Ok(files) = fs::read_dir(shard.path()) else {
            continue;
        };
        for file in files.flatten() {
            let is_temp = file.file_name().to_string_lossy().contains(TEMP_MARK);
            let age = file
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|modified| now.duration_since(modified).ok());
            if is_temp && age.is_some_and(|age| age > STALE_TEMP_AGE) {
                removed += usize::from(fs::remove_file(file.path()).is_ok());
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::store::decode::tests::{get_game, put_game, same_game, sample_games};
    use crate::service::store::{GraphStore, StoreConfig};

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("grundy-store-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn open(dir: &Path) -> GraphStore {
        GraphStore::open(
            &StoreConfig::Dir {
                path: dir.to_path_buf(),
            },
            1 << 20,
        )
        .expect("opens")
    }

    #[tokio::test]
    async fn round_trips_and_survives_reopening() {
        let dir = temp_dir("reopen");
        let store = open(&dir);
        for (id, game) in sample_games() {
            assert!(matches!(get_game(&store, &id).await, Ok(None)));
            put_game(&store, &id, &game).await.expect("stored");
            // Writing again replaces the entry in place.
            put_game(&store, &id, &game).await.expect("stored");
        }
        drop(store);
        let reopened = open(&dir);
        for (id, game) in sample_games() {
            let found = get_game(&reopened, &id)
                .await
                .expect("valid")
                .expect("present");
            assert!(same_game(&found, &game));
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_corrupted_file_is_refused() {
        let dir = temp_dir("corrupt");
        let store = open(&dir);
        let (id, game) = sample_games().remove(0);
        put_game(&store, &id, &game).await.expect("stored");
        let file = dir.join("graphs").join(&id.as_str()[..2]).join(id.as_str());
        let mut bytes = fs::read(&file).expect("the entry's file");
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        fs::write(&file, &bytes).expect("damaged");
        let error = get_game(&store, &id).await.expect_err("damage detected");
        assert!(matches!(error, StoreError::Corrupt { .. }), "{error}");
        // Registering the graph again repairs the entry.
        put_game(&store, &id, &game).await.expect("stored");
        assert!(get_game(&store, &id).await.is_ok_and(|g| g.is_some()));
        let _ = fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_file_larger_than_the_largest_graph_is_refused_unread() {
        let dir = temp_dir("huge");
        let store = open(&dir);
        let (id, _) = sample_games().remove(0);
        let (shard, file) = DirStore::open(&dir, 1 << 20)
            .expect("opens")
            .files
            .entry_path(&id);
        fs::create_dir_all(&shard).unwrap();
        // A sparse 40 GB file: reading it whole would abort the process.
        File::create(&file)
            .and_then(|f| f.set_len(40_000_000_000))
            .unwrap();
        let error = get_game(&store, &id).await.expect_err("refused");
        assert!(matches!(error, StoreError::Corrupt { .. }), "{error}");
        assert!(error.to_string().contains("40000000000 bytes"), "{error}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn interrupted_writes_leave_no_entry_and_are_swept() {
        let dir = temp_dir("sweep");
        let store = DirStore::open(&dir, 1 << 20).expect("opens");
        let (id, _) = sample_games().remove(0);
        let (shard, _) = store.files.entry_path(&id);
        fs::create_dir_all(&shard).unwrap();
        // What a kill -9 between create and rename leaves: a half-written temporary file.
        let leftover = shard.join(format!(".{id}{TEMP_MARK}1-0"));
        fs::write(&leftover, b"GRUNDYG\0half").unwrap();
        assert!(
            matches!(store.files.read_sync(&id), Ok(None)),
            "never read as an entry"
        );
        let old = SystemTime::now() - 2 * STALE_TEMP_AGE;
        File::options()
            .write(true)
            .open(&leftover)
            .and_then(|f| f.set_modified(old))
            .unwrap();
        let fresh = shard.join(format!(".{id}{TEMP_MARK}2-0"));
        fs::write(&fresh, b"in progress").unwrap();
        DirStore::open(&dir, 1 << 20).expect("reopens");
        assert!(!leftover.exists(), "stale temporary file removed");
        assert!(fresh.exists(), "a write possibly in progress is left alone");
        let _ = fs::remove_dir_all(&dir);
    }
}
