"""What the client decides without a server: addresses, chunks, error decoding."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2

from grundy import (
    Client,
    FieldViolation,
    Graph,
    GrundyError,
    InvalidArgument,
    Unavailable,
)
from grundy._convert import graph_chunks
from grundy._errors import _decoded_details, error_for
from grundy._target import Target, parse_target


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("127.0.0.1:50051", Target("127.0.0.1:50051", tls=False)),
        ("http://127.0.0.1:50051", Target("127.0.0.1:50051", tls=False)),
        ("http://localhost:50051/", Target("localhost:50051", tls=False)),
        ("https://grundy.example:443", Target("grundy.example:443", tls=True)),
        ("https://[::1]:50051", Target("[::1]:50051", tls=True)),
    ],
)
def test_the_address_forms_of_the_cli_are_taken(url: str, target: Target) -> None:
    assert parse_target(url) == target


@pytest.mark.parametrize(
    "url",
    ["127.0.0.1", "ftp://127.0.0.1:1", "http://host:0", "http://host:65536", "host:port",
     "http://host:1/path", "::1:50051", "", "x" * 100],
)
def test_other_addresses_are_refused_quoting_them(url: str) -> None:
    with pytest.raises(ValueError, match="the server must be HOST:PORT") as caught:
        parse_target(url)
    assert len(str(caught.value)) < 200


def test_a_ca_file_is_only_for_https() -> None:
    with pytest.raises(ValueError, match="tls_ca is for an https:// server"):
        Client("127.0.0.1:50051", tls_ca=b"PEM")


def test_chunks_concatenate_to_the_graph() -> None:
    graph = Graph(vertex_count=3, out_degrees=[2, 1, 0], targets=[1, 2, 2],
                  split_counts=[1, 1, 1])
    for size in (1, 2, 4, 100):
        chunks = [request.chunk for request in graph_chunks(graph, size)]
        assert chunks[0].vertex_count == 3
        assert all(chunk.vertex_count == 0 for chunk in chunks[1:])
        sizes = [len(c.out_degrees) + len(c.targets) + len(c.split_counts) for c in chunks]
        assert max(sizes) <= size and sum(sizes) == 9
        assert [v for c in chunks for v in c.out_degrees] == [2, 1, 0]
        assert [v for c in chunks for v in c.targets] == [1, 2, 2]
        assert [v for c in chunks for v in c.split_counts] == [1, 1, 1]


def packed(*details: object) -> bytes:
    status = status_pb2.Status(code=3, message="bad")
    for detail in details:
        wrapped = any_pb2.Any()
        wrapped.Pack(detail)  # type: ignore[arg-type]
        status.details.append(wrapped)
    return status.SerializeToString()


def test_the_status_details_trailer_is_decoded() -> None:
    info = error_details_pb2.ErrorInfo(reason="INVALID_GRAPH", domain="grundy.v1",
                                       metadata={"limit": "max_edges"})
    bad_request = error_details_pb2.BadRequest(field_violations=[
        error_details_pb2.BadRequest.FieldViolation(field="targets[2]", description="out")])
    retry = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(nanos=250_000_000))
    unknown = duration_pb2.Duration(seconds=1)
    trailers = [("other-bin", b"\x00"),
                ("grpc-status-details-bin", packed(info, bad_request, retry, unknown))]
    details = _decoded_details(trailers)
    error = error_for(grpc.StatusCode.INVALID_ARGUMENT, "bad", details)
    assert isinstance(error, InvalidArgument)
    assert (error.reason, error.domain, error.metadata) == (
        "INVALID_GRAPH", "grundy.v1", {"limit": "max_edges"})
    assert error.field_violations == (FieldViolation("targets[2]", "out"),)
    assert error.retry_delay is not None and error.retry_delay.total_seconds() == 0.25
    assert isinstance(details[3], any_pb2.Any)


def test_a_missing_or_damaged_trailer_leaves_no_details() -> None:
    assert _decoded_details(None) == ()
    assert _decoded_details([("grpc-status-details-bin", b"\xff\xff")]) == ()
    error = error_for(grpc.StatusCode.DATA_LOSS, "lost")
    assert type(error) is GrundyError
    assert (error.reason, error.metadata, error.retry_delay) == (None, {}, None)
    assert type(error_for(grpc.StatusCode.UNAVAILABLE, "gone")) is Unavailable
