"""Client.put_graph, evaluation by graph id, Client.summary and Client.values."""

from __future__ import annotations

from grundy import Client, Graph, InfiniteValue, Outcome, VertexValue
from grundy.v1 import grundy_pb2 as pb

# The values of the conftest's cyclic graph, vertex by vertex.
CYCLIC_VALUES = [
    VertexValue(0, InfiniteValue(()), counter=None, remoteness=None),
    VertexValue(1, InfiniteValue(()), counter=None, remoteness=None),
    VertexValue(2, 0, counter=0, remoteness=0),
    VertexValue(3, 1, counter=1, remoteness=1),
    VertexValue(4, InfiniteValue((0,)), counter=None, remoteness=1),
]


def test_put_graph_returns_an_id_to_evaluate_and_analyse_by(
    client: Client, cyclic_graph: Graph
) -> None:
    graph_id = client.put_graph(cyclic_graph)
    assert len(graph_id) == 64 and int(graph_id, 16) >= 0
    by_id = client.evaluate(graph_id, [[2], [3], [0], [4, 3]], explain=True)
    inline = client.evaluate(cyclic_graph, [[2], [3], [0], [4, 3]], explain=True)
    assert by_id == inline
    assert [v.outcome for v in by_id] == [Outcome.LOSE, Outcome.WIN, Outcome.DRAW, Outcome.DRAW]
    assert client.analyse(graph_id, [[4]]) == client.analyse(cyclic_graph, [[4]])


def test_a_graph_sent_in_small_chunks_gets_the_same_id(
    client: Client, cyclic_graph: Graph
) -> None:
    # Three numbers a chunk: out_degrees and targets each span chunks and share one.
    assert client.put_graph(cyclic_graph, chunk_values=3) == client.put_graph(cyclic_graph)
    addsub = Graph.from_adjacency([[1, 2], [3], [1, 3], []], split_counts=[2, 1, 3, 2])
    assert client.put_graph(addsub, chunk_values=1) == client.put_graph(addsub)


def test_summary_describes_a_registered_graph(client: Client, cyclic_graph: Graph) -> None:
    graph_id = client.put_graph(cyclic_graph)
    summary = client.summary(graph_id)
    assert summary.graph_id == graph_id
    assert (summary.vertex_count, summary.edge_count) == (5, 5)
    assert summary.cyclic and not summary.has_split_counts
    assert summary.max_value == 1


def test_values_reads_every_vertex_over_pages(client: Client, cyclic_graph: Graph) -> None:
    graph_id = client.put_graph(cyclic_graph)
    assert list(client.values(graph_id)) == CYCLIC_VALUES
    assert list(client.values(graph_id, page_size=2)) == CYCLIC_VALUES
    window = client.values(graph_id, first_vertex=1, vertex_limit=3, page_size=2)
    assert list(window) == CYCLIC_VALUES[1:4]
    assert list(client.values(graph_id, first_vertex=5)) == []


def test_values_pages_are_the_servers_messages(client: Client, cyclic_graph: Graph) -> None:
    graph_id = client.put_graph(cyclic_graph)
    request = pb.GetValuesRequest(graph_id=graph_id, page_size=2)
    responses = list(client.stub.GetValues(request, timeout=client.timeout))
    assert responses[0].HasField("graph")
    pages = [(page.first_vertex, len(page.values)) for page in responses[1:]]
    assert pages == [(0, 2), (2, 2), (4, 1)]


def test_values_stops_its_call_when_the_reader_stops(client: Client, cyclic_graph: Graph) -> None:
    graph_id = client.put_graph(cyclic_graph)
    values = client.values(graph_id, page_size=1)
    assert next(values) == CYCLIC_VALUES[0]
    values.close()
    # The channel serves the next call as before.
    assert client.summary(graph_id).vertex_count == 5
