"""The one place where the generated grundy.v1 messages meet the client's own types."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

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
from grundy.v1 import grundy_pb2 as pb


def graph_message(graph: Graph) -> pb.Graph:
    return pb.Graph(
        vertex_count=graph.vertex_count,
        out_degrees=graph.out_degrees,
        targets=graph.targets,
        split_counts=graph.split_counts,
    )


def start_message(graph: Graph | str, *, explain: bool = False) -> pb.EvaluateStart:
    """The start of a stream on ``graph``: the graph itself, or a registered graph's id."""
    if isinstance(graph, str):
        return pb.EvaluateStart(graph_id=graph, explain=explain)
    if isinstance(graph, Graph):
        return pb.EvaluateStart(graph=graph_message(graph), explain=explain)
    raise TypeError(f"graph must be a grundy.Graph or a graph id (str), not {type(graph).__name__}")


def query_messages(positions: Sequence[Position]) -> list[pb.Query]:
    """One query per position, its id its index."""
    queries = []
    for index, position in enumerate(positions):
        if isinstance(position, Values):
            query = pb.Query(id=index, dense_values=pb.DenseValues(values=position.values))
        else:
            query = pb.Query(id=index, tokens=pb.TokenPosition(vertices=position))
        queries.append(query)
    return queries


def graph_chunks(graph: Graph, chunk_values: int) -> Iterator[pb.PutGraphRequest]:
    """``graph`` as PutGraph chunks of at most ``chunk_values`` numbers each, made as they are
    sent: the server concatenates each list over the chunks, in order."""
    chunk = pb.Graph(vertex_count=graph.vertex_count)
    room = chunk_values
    for name, numbers in (
        ("out_degrees", graph.out_degrees),
        ("targets", graph.targets),
        ("split_counts", graph.split_counts),
    ):
        begin = 0
        while begin < len(numbers):
            if room == 0:
                yield pb.PutGraphRequest(chunk=chunk)
                chunk, room = pb.Graph(), chunk_values
            part = numbers[begin : begin + room]
            getattr(chunk, name).extend(part)
            begin += len(part)
            room -= len(part)
    yield pb.PutGraphRequest(chunk=chunk)


def outcome(value: int) -> Outcome | None:
    if value == pb.OUTCOME_UNSPECIFIED:
        return None
    return Outcome(pb.Outcome.Name(value).removeprefix("OUTCOME_"))


def _outcome_of_move(value: int) -> Outcome:
    found = outcome(value)
    if found is None:
        raise ValueError("the server sent a move without an outcome")
    return found


def move(message: pb.Move) -> Move | None:
    kind = message.WhichOneof("kind")
    if kind == "token":
        token = message.token
        return TokenMove(token.token_index, token.source_vertex, token.target_vertex)
    if kind == "split":
        split = message.split
        return SplitMove(
            split.vertex, tuple(split.odd_targets), split.pair_target, split.pair_count
        )
    return None


def _analysed_move(message: pb.AnalysedMove) -> AnalysedMove:
    found = move(message.move)
    if found is None:
        raise ValueError("the server sent an analysed move without its move")
    return AnalysedMove(
        move=found,
        outcome=_outcome_of_move(message.outcome),
        remoteness=message.remoteness if message.HasField("remoteness") else None,
        over_budget=message.over_budget,
    )


def verdict(message: pb.Verdict) -> Verdict:
    unknown = message.remoteness_unknown
    return Verdict(
        query_id=message.query_id,
        outcome=outcome(message.outcome),
        nim_sum=message.nim_sum,
        error=(
            QueryError(message.error.field, message.error.message)
            if message.HasField("error")
            else None
        ),
        best_move=move(message.best_move) if message.HasField("best_move") else None,
        remoteness=message.remoteness if message.HasField("remoteness") else None,
        remoteness_unknown=(
            None
            if unknown == pb.REMOTENESS_UNKNOWN_UNSPECIFIED
            else RemotenessUnknown(
                pb.RemotenessUnknown.Name(unknown).removeprefix("REMOTENESS_UNKNOWN_")
            )
        ),
        moves=tuple(_analysed_move(analysed) for analysed in message.moves),
        moves_omitted=message.moves_omitted,
    )


def summary(message: pb.GraphSummary) -> GraphSummary:
    return GraphSummary(
        vertex_count=message.vertex_count,
        edge_count=message.edge_count,
        cyclic=message.cyclic,
        has_split_counts=message.has_split_counts,
        max_value=message.max_value,
        graph_id=message.graph_id,
        table_bytes=message.table_bytes,
    )


def vertex_value(vertex: int, message: pb.VertexValue) -> VertexValue:
    value: int | InfiniteValue
    if message.WhichOneof("value") == "infinite":
        value = InfiniteValue(tuple(message.infinite.finite_followers))
    else:
        value = message.finite
    return VertexValue(
        vertex=vertex,
        value=value,
        counter=message.counter if message.HasField("counter") else None,
        remoteness=message.remoteness if message.HasField("remoteness") else None,
    )
