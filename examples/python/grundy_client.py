#!/usr/bin/env python3
"""A grundy client in Python, with the grundy package (clients/python).

    python grundy_client.py SERVER [--tls-ca FILE]

SERVER is HOST:PORT or http://HOST:PORT (plaintext), or https://HOST:PORT (TLS, the server's
certificate verified against --tls-ca, else the system's roots), as grundy's CLI takes it.

It asks server reflection (v1alpha, as grpcio-reflection speaks it) to list and describe
grundy.v1.GrundyService; evaluates the two judge samples of docs/games.md (token sliding, and
Addition-Subtraction with winning moves); analyses one position; and sends one bad graph,
printing the status code, its message and the google.rpc error details the server attached.
scripts/python-client-test.sh runs it against a real grundy-server and compares its output
with expected-output.txt, so the output is deterministic.
"""

import argparse
import os
import pathlib
import sys

# gRPC's own log (a failed TLS handshake, say) stays off stderr unless asked for: a failure is
# reported in one line below.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

import grpc  # noqa: E402 (after its log level)
from google.protobuf import descriptor_pool  # noqa: E402
from google.rpc import error_details_pb2  # noqa: E402
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (  # noqa: E402
    ProtoReflectionDescriptorDatabase,
)

import grundy  # noqa: E402
from grundy import Client, Graph, GrundyError, Values  # noqa: E402

# Seconds any one call may take, and the connection to the server.
TIMEOUT = 10


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


def print_outcomes(client, graph, positions):
    """Evaluates token positions, one line per position, as the judge's output."""
    for verdict in client.evaluate(graph, positions, timeout=TIMEOUT):
        print(verdict.outcome.value)


def move_text(move):
    """A move, in the CLI's --explain notation."""
    if isinstance(move, grundy.TokenMove):
        return f"token {move.token_index}: {move.source_vertex} -> {move.target_vertex}"
    picks = list(move.odd_targets) + [move.pair_target] * (2 * move.pair_count)
    return f"{move.vertex} -> " + " ".join(str(target) for target in sorted(picks))


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
    print("code:", error.code.name)
    print("message:", error.message)
    if not error.details:
        print("details: none")
    for detail in error.details:
        name = detail.DESCRIPTOR.full_name
        lines = DETAIL_LINES.get(type(detail))
        if lines is None:
            print(f"details: {name} (not decoded here)")
            continue
        print(f"details: {name}")
        for line in lines(detail):
            print(f"  {line}")


def run(client):
    print("== reflection v1alpha: list and describe")
    describe_service(client.channel, "grundy.v1.GrundyService")

    print("== chess sample (tests/data/chess_sample.in), one EvaluateBatch call per test case")
    chess_1 = Graph.from_adjacency([[1, 2], [], [3], []])
    print_outcomes(client, chess_1, [[0], [0, 2]])
    chess_2 = Graph.from_adjacency([[1], [2], [], []])
    print_outcomes(client, chess_2, [[0, 1], [1, 1], [0, 1, 3]])

    print("== addsub sample (tests/data/addsub_sample.in), EvaluateBatch with winning moves")
    addsub = Graph.from_adjacency([[1, 2], [3], [1, 3], []], split_counts=[2, 1, 3, 2])
    rounds = [Values([3, 4, 5, 6]), Values([0, 0, 0, 5]), Values([1, 0, 0, 0])]
    print("Game#1:")
    verdicts = client.evaluate(addsub, rounds, explain=True, timeout=TIMEOUT)
    for number, verdict in enumerate(verdicts, start=1):
        outcome = {"WIN": "WINNING", "LOSE": "LOSING"}[verdict.outcome.value]
        move = f" move {move_text(verdict.best_move)}" if verdict.best_move else ""
        print(f"Round#{number}: {outcome}{move}")

    print("== a winning move on the chess sample, test case 1")
    (verdict,) = client.evaluate(chess_1, [[0, 2]], explain=True, timeout=TIMEOUT)
    print(f"tokens on 0 and 2: {verdict.outcome.value}, nim-sum {verdict.nim_sum},"
          f" move {move_text(verdict.best_move)}")

    print("== the analysis of one position: tokens on 0 and 2 of the chess sample, test case 1")
    (verdict,) = client.analyse(chess_1, [[0, 2]], timeout=TIMEOUT)
    remoteness = "unknown" if verdict.remoteness is None else verdict.remoteness
    print(f"{verdict.outcome.value} in {remoteness} moves, nim-sum {verdict.nim_sum}")
    for analysed in verdict.moves:
        after = "unknown" if analysed.remoteness is None else analysed.remoteness
        print(f"  {analysed.move.source_vertex} -> {analysed.move.target_vertex}:"
              f" {analysed.outcome.value} for the mover, remoteness after it {after}")

    print("== a bad graph: vertex 7 of 4 in targets")
    bad = Graph(vertex_count=4, out_degrees=[2, 0, 1, 0], targets=[1, 2, 7])
    try:
        client.evaluate(bad, [], timeout=TIMEOUT)
        sys.exit("the bad graph was accepted")
    except GrundyError as error:
        print_error(error)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("server", help="HOST:PORT or http://HOST:PORT (plaintext), "
                                       "https://HOST:PORT (TLS)")
    parser.add_argument("--tls-ca", type=pathlib.Path,
                        help="PEM CA certificate(s) to verify an https:// server with "
                             "(default: the system's)")
    args = parser.parse_args()
    if args.tls_ca and not args.server.startswith("https://"):
        print("error: --tls-ca is for an https:// server", file=sys.stderr)
        sys.exit(2)
    try:
        client = Client(args.server, tls_ca=args.tls_ca, timeout=TIMEOUT)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    except OSError as error:
        sys.exit(f"error: cannot read --tls-ca {args.tls_ca}: {error.strerror}")
    with client:
        try:
            # Connected first: a server that is not there is one line, at once.
            client.wait_ready(timeout=TIMEOUT)
        except grundy.Unavailable as error:
            sys.exit(f"error: {error.message}")
        try:
            run(client)
        except (GrundyError, grpc.RpcError) as failure:
            # Reflection's calls are the raw stubs': their errors are grpc.RpcError.
            error = failure if isinstance(failure, GrundyError) else \
                GrundyError.from_rpc_error(failure)
            sys.exit(f"error: a call to {args.server} failed: {error}")


if __name__ == "__main__":
    main()
