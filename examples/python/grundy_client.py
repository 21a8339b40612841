#!/usr/bin/env python3
"""A grundy client in Python, generated from proto/ at run time.

    python grundy_client.py HOST:PORT [--proto-dir DIR] [--stubs-dir DIR]

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
import pathlib
import sys
import tempfile

import grpc
from google.protobuf import descriptor_pool
from google.rpc import error_details_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from grpc_status import rpc_status
from grpc_tools import protoc

# Seconds any one call may take.
TIMEOUT = 10


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
    parser.add_argument("address", help="the server, HOST:PORT (plaintext)")
    here = pathlib.Path(__file__).resolve().parent
    parser.add_argument("--proto-dir", default=here.parent.parent / "proto", type=pathlib.Path)
    parser.add_argument("--stubs-dir", type=pathlib.Path,
                        help="where to generate the stubs (default: a temporary directory)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        stubs_dir = args.stubs_dir or pathlib.Path(temporary)
        stubs_dir.mkdir(parents=True, exist_ok=True)
        pb, rpc = load_stubs(args.proto_dir.resolve(), stubs_dir)
        with grpc.insecure_channel(args.address) as channel:
            grpc.channel_ready_future(channel).result(timeout=TIMEOUT)
            run(channel, pb, rpc)


if __name__ == "__main__":
    main()
