#!/usr/bin/env python3
"""A grundy client in Python, generated from proto/ at run time.

    python grundy_client.py SERVER [--tls-ca FILE] [--proto-dir DIR] [--stubs-dir DIR]

SERVER is HOST:PORT or http://HOST:PORT (plaintext), or https://HOST:PORT (TLS, the server's
certificate verified against --tls-ca, else the system's roots), as grundy's CLI takes it.

It asks server reflection (v1alpha, as grpcio-reflection speaks it) to list and describe
grundy.v1.GrundyService; evaluates the two judge samples of docs/games.md (token sliding on an
Evaluate stream, Addition-Subtraction with EvaluateBatch); asks for winning moves; and sends
one bad graph, printing the status code, its message and the google.rpc error details the
server attached. scripts/python-client-test.sh runs it against a real grundy-server and
compares its output with expected-output.txt, so the output is deterministic.
"""

import argparse
import importlib
import importlib.resources
import os
import pathlib
import queue
import sys
import tempfile
import time

# gRPC's own log (a failed TLS handshake, say) stays off stderr unless asked for: a failure is
# reported in one line below.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

import grpc  # noqa: E402 (after its log level)
from google.protobuf import descriptor_pool
from google.rpc import error_details_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from grpc_status import rpc_status
from grpc_tools import protoc

# Seconds any one call may take, and the connection to the server.
TIMEOUT = 10


def parse_server(server):
    """The gRPC target (HOST:PORT) of SERVER, and whether it speaks TLS; exits with one line
    (status 2) when SERVER is not HOST:PORT, http://HOST:PORT or https://HOST:PORT."""
    scheme, separator, target = server.partition("://")
    if not separator:
        scheme, target = "http", server
    target = target.rstrip("/")
    host, colon, port = target.rpartition(":")
    if scheme not in ("http", "https") or not host or not colon or "/" in target \
            or not port.isdigit() or not 0 < int(port) < 65536:
        shown = server if len(server) <= 60 else server[:60] + "..."
        print(f"error: the server must be HOST:PORT, http://HOST:PORT (plaintext) or "
              f"https://HOST:PORT (TLS), e.g. http://127.0.0.1:50051, not {shown!r}",
              file=sys.stderr)
        sys.exit(2)
    return target, scheme == "https"


def connect(server, target, tls, tls_ca):
    """A channel to the server, once connected; exits with one line (status 1) when the
    connection fails, or takes longer than TIMEOUT seconds."""
    if tls:
        try:
            roots = tls_ca.read_bytes() if tls_ca else None
        except OSError as error:
            sys.exit(f"error: cannot read --tls-ca {tls_ca}: {error.strerror}")
        channel = grpc.secure_channel(target, grpc.ssl_channel_credentials(roots))
    else:
        channel = grpc.insecure_channel(target)
    states = queue.SimpleQueue()
    channel.subscribe(states.put, try_to_connect=True)
    deadline = time.monotonic() + TIMEOUT
    failure = None
    try:
        while failure is None:
            state = states.get(timeout=max(deadline - time.monotonic(), 0.001))
            if state is grpc.ChannelConnectivity.READY:
                return channel
            if state is grpc.ChannelConnectivity.TRANSIENT_FAILURE:
                failure = "the connection failed: is grundy-server running there, " + (
                    "with TLS and a certificate that --tls-ca (or the system) trusts?" if tls
                    else "in plaintext (https:// for a TLS server)?")
    except queue.Empty:
        failure = f"no connection within {TIMEOUT} s"
    finally:
        channel.unsubscribe(states.put)
    channel.close()
    sys.exit(f"error: cannot connect to {server}: {failure}")


def load_stubs(proto_dir, stubs_dir):
    """Generates the Python modules of every .proto file under proto_dir into stubs_dir with
    grpc_tools' protoc, and imports grundy.v1's messages and stubs."""
    protos = sorted(str(path) for path in pathlib.Path(proto_dir).rglob("*.proto"))
    well_known = importlib.resources.files("grpc_tools") / "_proto"
    status = protoc.main([
        "protoc", f"-I{proto_dir}", f"-I{well_known}",
        f"--python_out={stubs_dir}", f"--grpc_python_out={stubs_dir}", *protos,
    ])
    if status != 0:
        sys.exit(f"protoc failed on {proto_dir} (exit status {status})")
    sys.path.insert(0, str(stubs_dir))
    return (importlib.import_module("grundy.v1.grundy_pb2"),
            importlib.import_module("grundy.v1.grundy_pb2_grpc"))


def describe_service(channel, name):
    """Lists the services and describes one of them, through server reflection."""
    database = ProtoReflectionDescriptorDatabase(channel)
    print("services:", " ".join(sorted(database.get_services())))
    service = descriptor_pool.DescriptorPool(database).FindServiceByName(name)
    print(f"{service.full_name}:")
    for method in service.methods:
        request = ("stream " if method.client_streaming else "") + method.input_type.full_name
        response = ("stream " if method.server_streaming else "") + method.output_type.full_name
        print(f"  rpc {method.name}({request}) returns ({response})")


def csr_graph(pb, adjacency, split_counts=()):
    """A pb.Graph from out-neighbour lists (compressed sparse row form)."""
    return pb.Graph(
        vertex_count=len(adjacency),
        out_degrees=[len(targets) for targets in adjacency],
        targets=[target for targets in adjacency for target in targets],
        split_counts=split_counts,
    )


def outcome_name(pb, outcome):
    return pb.Outcome.Name(outcome).removeprefix("OUTCOME_")


def evaluate_tokens(stub, pb, graph, positions):
    """Evaluates token positions on one Evaluate stream: the graph first, then one batch of
    queries. Prints one line per position, as the judge's output."""
    def requests():
        yield pb.EvaluateRequest(start=pb.EvaluateStart(graph=graph))
        yield pb.EvaluateRequest(queries=pb.QueryBatch(queries=[
            pb.Query(id=i, tokens=pb.TokenPosition(vertices=tokens))
            for i, tokens in enumerate(positions)
        ]))

    for response in stub.Evaluate(requests(), timeout=TIMEOUT):
        if response.HasField("graph"):
            continue  # the first response: the graph's summary
        for verdict in response.verdicts:
            print(outcome_name(pb, verdict.outcome))


def move_text(verdict):
    """A verdict's best move, in the CLI's --explain notation."""
    kind = verdict.best_move.WhichOneof("kind")
    if kind == "token":
        token = verdict.best_move.token
        return f"token {token.token_index}: {token.source_vertex} -> {token.target_vertex}"
    if kind == "split":
        split = verdict.best_move.split
        picks = list(split.odd_targets) + [split.pair_target] * (2 * split.pair_count)
        return f"{split.vertex} -> " + " ".join(str(target) for target in sorted(picks))
    return "none"


def evaluate_batch(stub, pb, graph, queries, explain, analysis=None):
    """EvaluateBatch: the graph and every query in one request; returns the verdicts."""
    start = pb.EvaluateStart(graph=graph, explain=explain)
    if analysis is not None:
        start.analysis.CopyFrom(analysis)
    request = pb.EvaluateBatchRequest(start=start, queries=queries)
    return [verdict
            for response in stub.EvaluateBatch(request, timeout=TIMEOUT)
            for verdict in response.verdicts]


# google.rpc error details, each printed as lines of "name: value".
DETAIL_LINES = {
    error_details_pb2.BadRequest: lambda detail: [
        f"{violation.field}: {violation.description}"
        for violation in detail.field_violations],
    error_details_pb2.ErrorInfo: lambda detail: [
        f"reason: {detail.reason}", f"domain: {detail.domain}",
        *(f"metadata {key}: {detail.metadata[key]}" for key in sorted(detail.metadata))],
    error_details_pb2.RetryInfo: lambda detail: [
        f"retry_delay: {detail.retry_delay.ToJsonString()}"],
    error_details_pb2.QuotaFailure: lambda detail: [
        f"{violation.subject}: {violation.description}" for violation in detail.violations],
}


def print_error(error):
    """Prints a failed call's status code, message and decoded google.rpc details."""
    print("code:", error.code().name)
    print("message:", error.details())
    status = rpc_status.from_call(error)
    if status is None or not status.details:
        print("details: none")
        return
    for detail in status.details:
        kind = next((kind for kind in DETAIL_LINES if detail.Is(kind.DESCRIPTOR)), None)
        if kind is None:
            print(f"details: {detail.type_url} (not decoded here)")
            continue
        message = kind()
        detail.Unpack(message)
        print(f"details: {kind.DESCRIPTOR.full_name}")
        for line in DETAIL_LINES[kind](message):
            print(f"  {line}")


def run(channel, pb, rpc):
    print("== reflection v1alpha: list and describe")
    describe_service(channel, "grundy.v1.GrundyService")
    stub = rpc.GrundyServiceStub(channel)

    print("== chess sample (tests/data/chess_sample.in), one Evaluate stream per test case")
    chess_1 = csr_graph(pb, [[1, 2], [], [3], []])
    evaluate_tokens(stub, pb, chess_1, [[0], [0, 2]])
    chess_2 = csr_graph(pb, [[1], [2], [], []])
    evaluate_tokens(stub, pb, chess_2, [[0, 1], [1, 1], [0, 1, 3]])

    print("== addsub sample (tests/data/addsub_sample.in), EvaluateBatch with winning moves")
    addsub = csr_graph(pb, [[1, 2], [3], [1, 3], []], split_counts=[2, 1, 3, 2])
    rounds = [[3, 4, 5, 6], [0, 0, 0, 5], [1, 0, 0, 0]]
    queries = [pb.Query(id=r, dense_values=pb.DenseValues(values=values))
               for r, values in enumerate(rounds, start=1)]
    print("Game#1:")
    for verdict in evaluate_batch(stub, pb, addsub, queries, explain=True):
        outcome = {"WIN": "WINNING", "LOSE": "LOSING"}[outcome_name(pb, verdict.outcome)]
        line = f"Round#{verdict.query_id}: {outcome}"
        print(line + (f" move {move_text(verdict)}" if verdict.HasField("best_move") else ""))

    print("== a winning move on the chess sample, test case 1")
    query = pb.Query(id=7, tokens=pb.TokenPosition(vertices=[0, 2]))
    (verdict,) = evaluate_batch(stub, pb, chess_1, [query], explain=True)
    print(f"tokens on 0 and 2: {outcome_name(pb, verdict.outcome)}, nim-sum {verdict.nim_sum},"
          f" move {move_text(verdict)}")

    print("== the analysis of one position: tokens on 0 and 2 of the chess sample, test case 1")
    (verdict,) = evaluate_batch(stub, pb, chess_1, [query], explain=False,
                                analysis=pb.AnalysisOptions())
    remoteness = verdict.remoteness if verdict.HasField("remoteness") else "unknown"
    print(f"{outcome_name(pb, verdict.outcome)} in {remoteness} moves, nim-sum {verdict.nim_sum}")
    for analysed in verdict.moves:
        token = getattr(analysed, "move").token
        after = analysed.remoteness if analysed.HasField("remoteness") else "unknown"
        print(f"  {token.source_vertex} -> {token.target_vertex}:"
              f" {outcome_name(pb, analysed.outcome)} for the mover, remoteness after it {after}")

    print("== a bad graph: vertex 7 of 4 in targets")
    bad = pb.Graph(vertex_count=4, out_degrees=[2, 0, 1, 0], targets=[1, 2, 7])
    try:
        evaluate_batch(stub, pb, bad, [], explain=False)
        sys.exit("the bad graph was accepted")
    except grpc.RpcError as error:
        print_error(error)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("server", help="HOST:PORT or http://HOST:PORT (plaintext), "
                                       "https://HOST:PORT (TLS)")
    parser.add_argument("--tls-ca", type=pathlib.Path,
                        help="PEM CA certificate(s) to verify an https:// server with "
                             "(default: the system's)")
    here = pathlib.Path(__file__).resolve().parent
    parser.add_argument("--proto-dir", default=here.parent.parent / "proto", type=pathlib.Path)
    parser.add_argument("--stubs-dir", type=pathlib.Path,
                        help="where to generate the stubs (default: a temporary directory)")
    args = parser.parse_args()
    target, tls = parse_server(args.server)
    if args.tls_ca and not tls:
        print("error: --tls-ca is for an https:// server", file=sys.stderr)
        sys.exit(2)
    # Connected first: a server that is not there is said before the stubs are made.
    with connect(args.server, target, tls, args.tls_ca) as channel, \
            tempfile.TemporaryDirectory() as temporary:
        stubs_dir = args.stubs_dir or pathlib.Path(temporary)
        stubs_dir.mkdir(parents=True, exist_ok=True)
        pb, rpc = load_stubs(args.proto_dir.resolve(), stubs_dir)
        try:
            run(channel, pb, rpc)
        except grpc.RpcError as error:
            sys.exit(f"error: a call to {args.server} failed: {error.code().name}: "
                     f"{error.details()}")


if __name__ == "__main__":
    main()
