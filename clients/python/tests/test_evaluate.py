"""Client.evaluate and Client.analyse against a real server."""

from __future__ import annotations

from grundy import (
    AnalysedMove,
    Client,
    Graph,
    Outcome,
    QueryError,
    RemotenessUnknown,
    SplitMove,
    TokenMove,
    Values,
)


def test_evaluate_gives_win_lose_and_draw_with_nim_sums_on_a_cyclic_graph(
    client: Client, cyclic_graph: Graph
) -> None:
    positions = [[2], [3], [0], [3, 3], [4], [4, 3], []]
    verdicts = client.evaluate(cyclic_graph, positions)
    assert [(v.query_id, v.outcome, v.nim_sum) for v in verdicts] == [
        (0, Outcome.LOSE, 0),
        (1, Outcome.WIN, 1),
        (2, Outcome.DRAW, 0),
        (3, Outcome.LOSE, 0),
        (4, Outcome.WIN, 0),
        (5, Outcome.DRAW, 1),
        (6, Outcome.LOSE, 0),
    ]
    assert all(v.best_move is None and v.error is None for v in verdicts)


def test_evaluate_with_explain_gives_a_winning_or_draw_keeping_move(
    client: Client, cyclic_graph: Graph
) -> None:
    verdicts = client.evaluate(cyclic_graph, [[3], [0], [2], [4]], explain=True)
    assert [v.best_move for v in verdicts] == [
        TokenMove(token_index=0, source_vertex=3, target_vertex=2),
        TokenMove(token_index=0, source_vertex=0, target_vertex=1),
        None,
        TokenMove(token_index=0, source_vertex=4, target_vertex=2),
    ]


def test_a_malformed_position_is_answered_in_its_verdict_and_the_others_too(
    client: Client, cyclic_graph: Graph
) -> None:
    verdicts = client.evaluate(cyclic_graph, [[3], [9], [2]])
    assert [v.outcome for v in verdicts] == [Outcome.WIN, None, Outcome.LOSE]
    assert verdicts[1].error == QueryError(
        "tokens.vertices[0]", "vertex 9 is out of range (vertex_count 5)"
    )


def test_evaluate_takes_values_on_the_addition_subtraction_game(client: Client) -> None:
    addsub = Graph.from_adjacency([[1, 2], [3], [1, 3], []], split_counts=[2, 1, 3, 2])
    rounds = [Values([3, 4, 5, 6]), Values([0, 0, 0, 5]), Values([1, 0, 0, 0])]
    verdicts = client.evaluate(addsub, rounds, explain=True)
    assert [(v.outcome, v.best_move) for v in verdicts] == [
        (Outcome.WIN, SplitMove(vertex=2, odd_targets=(1,), pair_target=1, pair_count=1)),
        (Outcome.LOSE, None),
        (Outcome.WIN, SplitMove(vertex=0, odd_targets=(), pair_target=1, pair_count=1)),
    ]


def test_analyse_gives_the_remoteness_and_every_move_best_first(
    client: Client, cyclic_graph: Graph
) -> None:
    win, lose, draw = client.analyse(cyclic_graph, [[4], [3, 3], [0]])
    assert (win.outcome, win.remoteness, win.remoteness_unknown) == (Outcome.WIN, 1, None)
    assert win.moves == (
        AnalysedMove(TokenMove(0, 4, 2), Outcome.WIN, remoteness=0, over_budget=False),
        AnalysedMove(TokenMove(0, 4, 0), Outcome.DRAW, remoteness=None, over_budget=False),
    )
    assert win.best_move == TokenMove(0, 4, 2)
    assert (lose.outcome, lose.remoteness) == (Outcome.LOSE, 2)
    assert lose.moves == (AnalysedMove(TokenMove(0, 3, 2), Outcome.LOSE, 1, False),)
    assert (draw.outcome, draw.remoteness) == (Outcome.DRAW, None)
    assert draw.remoteness_unknown is RemotenessUnknown.DRAW


def test_analyse_caps_the_moves_and_counts_those_left_out(
    client: Client, cyclic_graph: Graph
) -> None:
    (verdict,) = client.analyse(cyclic_graph, [[4]], max_moves=1)
    assert [analysed.move for analysed in verdict.moves] == [TokenMove(0, 4, 2)]
    assert verdict.moves_omitted == 1
