"""The client: one gRPC channel to a grundy-server, and a method per task."""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Generator, Iterator, Sequence
from types import TracebackType
from typing import Any

import grpc

from grundy import _convert
from grundy._errors import GrundyError, error_for, from_rpc_error
from grundy._target import parse_target
from grundy._types import Graph, GraphSummary, Position, Verdict, VertexValue
from grundy.v1 import grundy_pb2 as pb
from grundy.v1 import grundy_pb2_grpc

# The server's default --max-message-bytes: a response may be that large.
_MAX_RECEIVE_BYTES = 256 << 20

# Numbers per PutGraph chunk: about 1 MiB of varints, far below any message limit.
_CHUNK_VALUES = 1 << 18


class Client:
    """A connection to a grundy-server.

    ``url`` is ``HOST:PORT`` or ``http://HOST:PORT`` (plaintext), or ``https://HOST:PORT``
    (TLS, the server's certificate verified against ``tls_ca``: a PEM file's path, or its
    bytes; else the system's roots). ``token`` is sent as ``authorization: Bearer <token>``
    on every call, for a server run with ``--auth-token-file``. ``timeout`` is each call's
    deadline in seconds (None: none). ``options`` are extra gRPC channel options.

    Use it as a context manager, or call ``close()``: it holds a channel. A failed call
    raises a ``GrundyError`` (a subclass by status code); a bad ``url`` raises ValueError.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        tls_ca: str | os.PathLike[str] | bytes | None = None,
        timeout: float | None = 30.0,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        target = parse_target(url)
        if tls_ca is not None and not target.tls:
            raise ValueError(f"tls_ca is for an https:// server, not {url!r}")
        self.url = url
        self._tls = target.tls
        self.timeout = timeout
        self._metadata = (("authorization", f"Bearer {token}"),) if token is not None else ()
        channel_options = [("grpc.max_receive_message_length", _MAX_RECEIVE_BYTES), *options]
        if target.tls:
            if isinstance(tls_ca, (str, os.PathLike)):
                with open(tls_ca, "rb") as file:
                    tls_ca = file.read()
            credentials = grpc.ssl_channel_credentials(root_certificates=tls_ca)
            self.channel = grpc.secure_channel(target.address, credentials, channel_options)
        else:
            self.channel = grpc.insecure_channel(target.address, channel_options)
        # The generated stub on the channel, for what the methods do not cover (untyped: the
        # service stubs have no .pyi; their messages do).
        stub = grundy_pb2_grpc.GrundyServiceStub(self.channel)  # type: ignore[no-untyped-call]
        self.stub: Any = stub

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Closes the channel; calls in progress are cancelled."""
        self.channel.close()

    def wait_ready(self, timeout: float = 10.0) -> None:
        """Connects now, and returns once connected. Raises ``Unavailable`` as soon as the
        connection fails (nothing listens there, the TLS handshake fails), or after
        ``timeout`` seconds without a connection."""
        states: queue.SimpleQueue[grpc.ChannelConnectivity] = queue.SimpleQueue()
        self.channel.subscribe(states.put, try_to_connect=True)
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    state = states.get(timeout=max(deadline - time.monotonic(), 0.001))
                except queue.Empty:
                    failure = f"no connection within {timeout:g} s"
                    break
                if state is grpc.ChannelConnectivity.READY:
                    return
                if state is grpc.ChannelConnectivity.TRANSIENT_FAILURE:
                    failure = "the connection failed: is grundy-server running there, " + (
                        "with TLS and a certificate that the CA (or the system) trusts?"
                        if self._tls
                        else "in plaintext (https:// for a TLS server)?"
                    )
                    break
        finally:
            self.channel.unsubscribe(states.put)
        raise error_for(grpc.StatusCode.UNAVAILABLE, f"cannot connect to {self.url}: {failure}")

    def evaluate(
        self,
        graph: Graph | str,
        positions: Sequence[Position],
        *,
        explain: bool = False,
        timeout: float | None = None,
    ) -> list[Verdict]:
        """The verdict of each position on ``graph`` (a Graph, or a registered graph's id),
        in order: WIN, LOSE or DRAW and the nim-sum, and with ``explain`` a winning (or
        draw-keeping) move. A position is a list of token vertices, or ``Values``. A
        malformed position is answered with ``Verdict.error``; the others are answered.
        Raises ``NotFound`` for an unknown graph id, ``InvalidArgument`` for a bad graph."""
        start = _convert.start_message(graph, explain=explain)
        return self._evaluate_batch(start, positions, timeout)

    def analyse(
        self,
        graph: Graph | str,
        positions: Sequence[Position],
        *,
        max_moves: int = 0,
        position_budget: int = 0,
        timeout: float | None = None,
    ) -> list[Verdict]:
        """As ``evaluate``, with each position's analysis: its remoteness and its moves,
        best first, each with its outcome for the mover and the remoteness it leads to.
        ``max_moves`` and ``position_budget`` (0: the server's caps) bound it."""
        start = _convert.start_message(graph)
        start.analysis.CopyFrom(
            pb.AnalysisOptions(max_moves=max_moves, position_budget=position_budget)
        )
        return self._evaluate_batch(start, positions, timeout)

    def put_graph(
        self, graph: Graph, *, chunk_values: int = _CHUNK_VALUES, timeout: float | None = None
    ) -> str:
        """Registers ``graph`` and returns its id, for ``evaluate``, ``analyse`` and
        ``values``; the same graph always gets the same id. The graph goes in chunks of at
        most ``chunk_values`` numbers, so that graphs far larger than a message fit."""
        if chunk_values < 1:
            raise ValueError(f"chunk_values must be at least 1, not {chunk_values}")
        chunks = _convert.graph_chunks(graph, chunk_values)
        try:
            response = self.stub.PutGraph(chunks, **self._call_options(timeout))
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error
        graph_id: str = response.graph_id
        return graph_id

    def summary(self, graph_id: str, *, timeout: float | None = None) -> GraphSummary:
        """What the server holds of a registered graph: sizes, cyclic, largest value."""
        request = pb.GetValuesRequest(graph_id=graph_id, summary_only=True)
        for response in self._stream(self.stub.GetValues, request, timeout):
            if response.HasField("graph"):
                return _convert.summary(response.graph)
        raise GrundyError(grpc.StatusCode.INTERNAL, "GetValues answered without a summary")

    def values(
        self,
        graph_id: str,
        *,
        first_vertex: int = 0,
        vertex_limit: int = 0,
        page_size: int = 0,
        timeout: float | None = None,
    ) -> Generator[VertexValue, None, None]:
        """The value of each vertex of a registered graph from ``first_vertex`` on (at most
        ``vertex_limit``, 0: to the last), read as the server sends its pages of
        ``page_size`` vertices (0: the server's default). Lazy: the call starts at the first
        ``next()``, and stops when the iterator is closed or dropped."""
        request = pb.GetValuesRequest(
            graph_id=graph_id,
            first_vertex=first_vertex,
            vertex_limit=vertex_limit,
            page_size=page_size,
        )
        for response in self._stream(self.stub.GetValues, request, timeout):
            for offset, value in enumerate(response.values):
                yield _convert.vertex_value(response.first_vertex + offset, value)

    def _evaluate_batch(
        self, start: pb.EvaluateStart, positions: Sequence[Position], timeout: float | None
    ) -> list[Verdict]:
        request = pb.EvaluateBatchRequest(start=start, queries=_convert.query_messages(positions))
        verdicts: list[Verdict | None] = [None] * len(positions)
        for response in self._stream(self.stub.EvaluateBatch, request, timeout):
            # With explain or an analysis the verdicts come as they are found: by query id.
            for message in response.verdicts:
                if message.query_id < len(verdicts):
                    verdicts[message.query_id] = _convert.verdict(message)
        answered = [verdict for verdict in verdicts if verdict is not None]
        if len(answered) != len(positions):
            raise GrundyError(
                grpc.StatusCode.INTERNAL,
                f"the server answered {len(answered)} of {len(positions)} positions",
            )
        return answered

    def _stream(self, method: Any, request: Any, timeout: float | None) -> Iterator[Any]:
        """The responses of a server-streaming call, its errors raised as GrundyError; the
        call is cancelled when the caller stops reading."""
        call = method(request, **self._call_options(timeout))
        try:
            yield from call
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error
        finally:
            call.cancel()

    def _call_options(self, timeout: float | None) -> dict[str, Any]:
        return {
            "timeout": timeout if timeout is not None else self.timeout,
            "metadata": self._metadata,
        }
