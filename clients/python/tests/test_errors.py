"""Failed calls raise GrundyError subclasses carrying the google.rpc details."""

from __future__ import annotations

import datetime
import queue
from collections.abc import Iterator

import grpc
import pytest
from conftest import CALL_TIMEOUT, server

from grundy import (
    Client,
    FieldViolation,
    Graph,
    GrundyError,
    InvalidArgument,
    NotFound,
    QuotaViolation,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
)
from grundy.v1 import grundy_pb2 as pb


def test_a_bad_graph_is_invalid_argument_naming_the_field(client: Client) -> None:
    bad = Graph(vertex_count=4, out_degrees=[2, 0, 1, 0], targets=[1, 2, 7])
    with pytest.raises(InvalidArgument) as caught:
        client.evaluate(bad, [[0]])
    error = caught.value
    message = "invalid graph: targets[2] = 7 is out of range (vertex_count 4)"
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    assert error.message == message
    assert str(error) == f"INVALID_ARGUMENT: {message}"
    assert (error.reason, error.domain) == ("INVALID_GRAPH", "grundy.v1")
    assert error.field_violations == (FieldViolation("targets[2]", message),)
    assert error.retry_delay is None
    with pytest.raises(InvalidArgument, match=r"out_degrees"):
        client.put_graph(Graph(vertex_count=2, out_degrees=[1], targets=[0]))


def test_an_unknown_graph_id_is_not_found(client: Client) -> None:
    unknown = "0" * 64
    with pytest.raises(NotFound) as caught:
        client.evaluate(unknown, [[0]])
    assert caught.value.reason == "UNKNOWN_GRAPH"
    assert "upload it with PutGraph" in caught.value.message
    with pytest.raises(NotFound):
        list(client.values(unknown))
    with pytest.raises(NotFound):
        client.summary(unknown)


def test_a_graph_over_a_limit_is_resource_exhausted_naming_it(client: Client) -> None:
    too_large = Graph(vertex_count=1001, out_degrees=[0] * 1001, targets=[])
    with pytest.raises(ResourceExhausted) as caught:
        client.put_graph(too_large)
    error = caught.value
    assert error.reason == "GRAPH_TOO_LARGE"
    assert error.metadata == {"limit": "max_vertices", "limit_value": "1000"}
    assert error.quota_violations == (QuotaViolation("max_vertices", error.message),)
    assert isinstance(error, GrundyError)


def test_the_stream_limit_is_resource_exhausted_with_a_retry_delay() -> None:
    with Client(server("GRUNDY_TEST_LIMITED_SERVER"), timeout=CALL_TIMEOUT) as client:
        # One stream holds the server's only slot: open, its graph's summary read.
        more: queue.SimpleQueue[pb.EvaluateRequest | None] = queue.SimpleQueue()

        def requests() -> Iterator[pb.EvaluateRequest]:
            graph = pb.Graph(vertex_count=1, out_degrees=[0])
            yield pb.EvaluateRequest(start=pb.EvaluateStart(graph=graph))
            while (request := more.get()) is not None:
                yield request

        held = client.stub.Evaluate(requests(), timeout=CALL_TIMEOUT)
        try:
            assert next(held).HasField("graph")
            with pytest.raises(ResourceExhausted) as caught:
                client.evaluate(Graph.from_adjacency([[]]), [[0]])
        finally:
            more.put(None)
            held.cancel()
    error = caught.value
    assert error.reason == "TOO_MANY_STREAMS"
    assert error.metadata["limit"] == "max_concurrent_streams"
    assert error.retry_delay == datetime.timedelta(seconds=1)


def test_a_server_with_a_token_refuses_a_call_without_it() -> None:
    address = server("GRUNDY_TEST_AUTH_SERVER")
    token = server("GRUNDY_TEST_AUTH_TOKEN")
    graph = Graph.from_adjacency([[1], []])
    with Client(address, timeout=CALL_TIMEOUT) as client:
        with pytest.raises(Unauthenticated) as caught:
            client.evaluate(graph, [[0]])
    assert caught.value.reason == "UNAUTHENTICATED"
    assert "missing bearer token" in caught.value.message
    with Client(address, token="not the token", timeout=CALL_TIMEOUT) as client:
        with pytest.raises(Unauthenticated, match="invalid bearer token"):
            client.put_graph(graph)
    with Client(address, token=token, timeout=CALL_TIMEOUT) as client:
        assert len(client.evaluate(graph, [[0]])) == 1
        assert client.summary(client.put_graph(graph)).vertex_count == 2


def test_a_server_that_is_not_there_is_unavailable() -> None:
    # Nothing listens on port 1 of a test machine: the connection is refused at once.
    with Client("127.0.0.1:1", timeout=CALL_TIMEOUT) as client:
        with pytest.raises(Unavailable, match="is grundy-server running there"):
            client.wait_ready(timeout=CALL_TIMEOUT)
        with pytest.raises(Unavailable):
            client.evaluate(Graph.from_adjacency([[]]), [[0]])
