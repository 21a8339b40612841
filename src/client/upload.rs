//! A graph too large for one message, uploaded with `PutGraph` in chunks: first the
//! out-degrees, then the targets, then the split counts, each list cut into pieces that stay
//! under the message limit. The targets go as `fixed_targets` (four bytes each, written and
//! read as a copy: a large graph's vertex numbers take three or four bytes as varints anyway).
//! The chunks are built one at a time as the stream sends them, so the upload holds no second
//! copy of the graph.

use std::sync::Arc;

use tonic::{Code, Status};

use super::GrundyClient;
use crate::proto::{self, PutGraphRequest};
use crate::wire::size;

/// Uploads `graph` to `client` with `PutGraph`, in chunks of at most `chunk_bytes` encoded
/// each; returns its id.
///
/// The targets go as `fixed_targets`. A server from before that field ignores it, finds the
/// targets missing and refuses the graph (INVALID_ARGUMENT): on that answer the graph is sent
/// once more with varint `targets`, so that a new client works with an old server (during a
/// rolling update, say). A graph that is really malformed is refused again, with the error of
/// the second upload.
pub async fn put_graph(
    client: &mut GrundyClient,
    graph: Arc<proto::Graph>,
    chunk_bytes: usize,
) -> Result<String, Status> {
    let fixed = Chunks::new(graph.clone(), chunk_bytes, Targets::Fixed);
    let response = match client.put_graph(tokio_stream::iter(fixed)).await {
        Err(status) if status.code() == Code::InvalidArgument => {
            let varint = Chunks::new(graph, chunk_bytes, Targets::Varint);
            client.put_graph(tokio_stream::iter(varint)).await?
        }
        response => response?,
    };
    Ok(response.into_inner().graph_id)
}

/// The field a graph's targets are sent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Targets {
    /// `fixed_targets`: four bytes each, copied on both sides.
    Fixed,
    /// `targets`: varints, which every server reads.
    Varint,
}

/// The lists a graph's chunks come from, in order.
const LISTS: usize = 4;

/// The chunks of a graph, in order.
struct Chunks {
    graph: Arc<proto::Graph>,
    /// Elements per chunk of a varint list.
    elements: usize,
    /// Targets per chunk.
    target_elements: usize,
    /// The field the targets go in.
    targets: Targets,
    /// Which list the next chunk comes from (0: out-degrees, 1: targets, 2: fixed targets,
    /// 3: split counts).
    list: usize,
    /// Where in that list it starts.
    offset: usize,
    /// No chunk sent yet: the next one carries `vertex_count` even if every list is empty.
    first: bool,
}

impl Chunks {
    fn new(graph: Arc<proto::Graph>, chunk_bytes: usize, targets: Targets) -> Self {
        let room = chunk_bytes.saturating_sub(size::PUT_GRAPH_CHUNK_FRAME);
        let elements = (room / size::MAX_U32_VARINT).max(1);
        Self {
            graph,
            elements,
            target_elements: match targets {
                Targets::Fixed => (room / 4).max(1),
                Targets::Varint => elements,
            },
            targets,
            list: 0,
            offset: 0,
            first: true,
        }
    }

    fn list(&self, list: usize) -> &[u32] {
        match list {
            0 => &self.graph.out_degrees,
            1 => &self.graph.targets,
            2 => &self.graph.fixed_targets,
            _ => &self.graph.split_counts,
        }
    }
}

impl Iterator for Chunks {
    type Item = PutGraphRequest;

    fn next(&mut self) -> Option<PutGraphRequest> {
        while self.list < LISTS && self.offset >= self.list(self.list).len() {
            self.list += 1;
            self.offset = 0;
        }
        if self.list == LISTS && !self.first {
            return None;
        }
        let mut chunk = proto::Graph {
            vertex_count: self.graph.vertex_count,
            ..proto::Graph::default()
        };
        self.first = false;
        if self.list < LISTS {
            let list = self.list(self.list);
            let elements = match self.list {
                1 | 2 => self.target_elements,
                _ => self.elements,
            };
            let end = (self.offset + elements).min(list.len());
            let piece = list[self.offset..end].to_vec();
            match self.list {
                0 => chunk.out_degrees = piece,
                1 | 2 if self.targets == Targets::Fixed => chunk.fixed_targets = piece,
                1 | 2 => chunk.targets = piece,
                _ => chunk.split_counts = piece,
            }
            self.offset = end;
        }
        Some(PutGraphRequest { chunk: Some(chunk) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    fn graph() -> proto::Graph {
        proto::Graph {
            vertex_count: 1000,
            out_degrees: (0..1000).map(|v| v % 7).collect(),
            targets: (0..2997).map(|e| (e * 37 + 5) % 1000).collect(),
            split_counts: vec![1; 1000],
            fixed_targets: Vec::new(),
        }
    }

    #[test]
    fn chunks_concatenate_to_the_graph_and_stay_under_the_limit() {
        // A caller's graph may hold some of its targets in either field.
        let mut split = graph();
        split.fixed_targets = split.targets.split_off(1000);
        for source in [graph(), split] {
            for targets in [Targets::Fixed, Targets::Varint] {
                let chunk_bytes = 256;
                let chunks: Vec<PutGraphRequest> =
                    Chunks::new(Arc::new(source.clone()), chunk_bytes, targets).collect();
                assert!(chunks.len() > 3);
                let mut joined = proto::Graph::default();
                for request in &chunks {
                    assert!(
                        request.encoded_len() <= chunk_bytes,
                        "{}",
                        request.encoded_len()
                    );
                    let chunk = request.chunk.as_ref().unwrap();
                    assert_eq!(chunk.vertex_count, 1000);
                    joined.vertex_count = chunk.vertex_count;
                    joined.out_degrees.extend_from_slice(&chunk.out_degrees);
                    let (sent, unused) = match targets {
                        Targets::Fixed => (&chunk.fixed_targets, &chunk.targets),
                        Targets::Varint => (&chunk.targets, &chunk.fixed_targets),
                    };
                    assert!(unused.is_empty(), "{targets:?}");
                    joined.targets.extend_from_slice(sent);
                    joined.split_counts.extend_from_slice(&chunk.split_counts);
                }
                assert_eq!(joined, graph(), "{targets:?}");
            }
        }
    }

    #[test]
    fn a_graph_without_edges_is_still_one_chunk() {
        let graph = proto::Graph {
            vertex_count: 3,
            out_degrees: vec![],
            ..proto::Graph::default()
        };
        let chunks: Vec<PutGraphRequest> =
            Chunks::new(Arc::new(graph), 100, Targets::Fixed).collect();
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].chunk.as_ref().unwrap().vertex_count, 3);
    }

    /// A server from before `fixed_targets`: it never sees them (an unknown field), so it
    /// counts only `targets`, as the real server did.
    mod old_server {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};

        use tokio_stream::wrappers::ReceiverStream;
        use tonic::{Request, Response, Status, Streaming};

        use crate::proto::grundy_service_server::GrundyService;
        use crate::proto::{
            EvaluateBatchRequest, EvaluateBatchResponse, EvaluateRequest, EvaluateResponse,
            GetValuesRequest, GetValuesResponse, PutGraphRequest, PutGraphResponse, Sent,
        };

        #[derive(Default, Clone)]
        pub(super) struct OldServer {
            pub(super) uploads: Arc<AtomicUsize>,
        }

        type Stream<T> = ReceiverStream<Result<T, Status>>;

        #[tonic::async_trait]
        impl GrundyService for OldServer {
            type EvaluateStream = Stream<Sent<EvaluateResponse>>;
            type EvaluateBatchStream = Stream<Sent<EvaluateBatchResponse>>;
            type GetValuesStream = Stream<GetValuesResponse>;

            async fn evaluate(
                &self,
                _: Request<Streaming<EvaluateRequest>>,
            ) -> Result<Response<Self::EvaluateStream>, Status> {
                Err(Status::unimplemented("PutGraph only"))
            }

            async fn evaluate_batch(
                &self,
                _: Request<EvaluateBatchRequest>,
            ) -> Result<Response<Self::EvaluateBatchStream>, Status> {
                Err(Status::unimplemented("PutGraph only"))
            }

            async fn put_graph(
                &self,
                request: Request<Streaming<PutGraphRequest>>,
            ) -> Result<Response<PutGraphResponse>, Status> {
                self.uploads.fetch_add(1, Ordering::SeqCst);
                let mut inbound = request.into_inner();
                let (mut degrees, mut targets) = (0u64, 0u64);
                while let Some(request) = inbound.message().await? {
                    let chunk = request.chunk.unwrap_or_default();
                    degrees += chunk.out_degrees.iter().map(|&d| u64::from(d)).sum::<u64>();
                    targets += chunk.targets.len() as u64;
                }
                if targets != degrees {
                    return Err(Status::invalid_argument(format!(
                        "targets has {targets} entries, expected the sum of out_degrees = {degrees}"
                    )));
                }
                Ok(Response::new(PutGraphResponse {
                    graph_id: format!("{targets} targets"),
                    ..PutGraphResponse::default()
                }))
            }

            async fn get_values(
                &self,
                _: Request<GetValuesRequest>,
            ) -> Result<Response<Self::GetValuesStream>, Status> {
                Err(Status::unimplemented("PutGraph only"))
            }
        }
    }

    #[tokio::test]
    async fn a_server_without_fixed_width_targets_gets_them_as_varints() {
        use crate::proto::grundy_service_server::GrundyServiceServer;
        use std::sync::atomic::Ordering;

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = old_server::OldServer::default();
        let uploads = server.uploads.clone();
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(GrundyServiceServer::new(server))
                .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
        );
        let mut client = crate::client::connect(
            &format!("http://{address}"),
            &crate::client::ConnectionArgs::default(),
            1 << 20,
        )
        .await
        .unwrap();
        let id = put_graph(&mut client, Arc::new(graph()), 256)
            .await
            .unwrap();
        assert_eq!(id, "2997 targets");
        assert_eq!(uploads.load(Ordering::SeqCst), 2);
    }
}
