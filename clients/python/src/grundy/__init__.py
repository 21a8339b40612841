"""A typed client of grundy-server's grundy.v1 gRPC API: impartial games on directed graphs.

    from grundy import Client, Graph

    with Client("127.0.0.1:50051") as client:
        graph = Graph.from_adjacency([[1, 2], [], [3], []])
        for verdict in client.evaluate(graph, [[0], [0, 2]], explain=True):
            print(verdict.outcome, verdict.nim_sum, verdict.best_move)

A failed call raises a GrundyError, of a subclass by status code, with the google.rpc details
the server attached. The generated messages and stubs are grundy.v1.grundy_pb2 and
grundy.v1.grundy_pb2_grpc; ``Client.stub`` is the stub on the client's channel.
"""

from grundy._client import Client
from grundy._errors import (
    Cancelled,
    DeadlineExceeded,
    FieldViolation,
    GrundyError,
    Internal,
    InvalidArgument,
    NotFound,
    QuotaViolation,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
    Unimplemented,
)
from grundy._types import (
    AnalysedMove,
    Graph,
    GraphSummary,
    InfiniteValue,
    Move,
    Outcome,
    Position,
    QueryError,
    RemotenessUnknown,
    SplitMove,
    TokenMove,
    Values,
    Verdict,
    VertexValue,
)

__version__ = "0.1.0"

__all__ = [
    "AnalysedMove",
    "Cancelled",
    "Client",
    "DeadlineExceeded",
    "FieldViolation",
    "Graph",
    "GraphSummary",
    "GrundyError",
    "InfiniteValue",
    "Internal",
    "InvalidArgument",
    "Move",
    "NotFound",
    "Outcome",
    "Position",
    "QueryError",
    "QuotaViolation",
    "RemotenessUnknown",
    "ResourceExhausted",
    "SplitMove",
    "TokenMove",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "Values",
    "Verdict",
    "VertexValue",
]
