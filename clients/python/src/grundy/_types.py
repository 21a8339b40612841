"""The values the client takes and returns: plain, immutable, typed. The protobuf messages stop
in _convert.py; nothing here imports them."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass


class Outcome(enum.Enum):
    """The outcome of a position for the player to move."""

    WIN = "WIN"
    """The player to move wins with best play."""
    LOSE = "LOSE"
    """The player to move loses against best play."""
    DRAW = "DRAW"
    """Neither player can force a win: best play goes on forever (graphs with cycles)."""


class RemotenessUnknown(enum.Enum):
    """Why an analysed verdict has no remoteness."""

    DRAW = "DRAW"
    """The position is a draw: best play never ends."""
    OVER_BUDGET = "OVER_BUDGET"
    """The exact search needed more positions or work than its budgets."""
    NOT_COMPUTED = "NOT_COMPUTED"
    """The Addition-Subtraction game (split counts): remoteness is not computed for it."""


@dataclass(frozen=True)
class Graph:
    """A directed graph in compressed sparse row form, plus optional split counts.

    The out-edges of vertex v are ``targets[offset(v) : offset(v) + out_degrees[v]]``, with
    offset(v) the sum of ``out_degrees[:v]``. Without ``split_counts`` the game is token
    sliding (cycles allowed); with them, one count per vertex, the Addition-Subtraction game
    (acyclic graphs only). The server checks every field and names the one it refuses.
    """

    vertex_count: int
    out_degrees: Sequence[int]
    targets: Sequence[int]
    split_counts: Sequence[int] = ()

    @classmethod
    def from_adjacency(
        cls, adjacency: Sequence[Sequence[int]], split_counts: Sequence[int] = ()
    ) -> Graph:
        """The graph whose vertex v has the out-neighbours ``adjacency[v]``."""
        return cls(
            vertex_count=len(adjacency),
            out_degrees=[len(targets) for targets in adjacency],
            targets=[target for targets in adjacency for target in targets],
            split_counts=split_counts,
        )


@dataclass(frozen=True)
class Values:
    """A position given as one value per vertex (the Addition-Subtraction judge's form);
    a plain sequence of vertices is a position of tokens instead."""

    values: Sequence[int]


Position = Sequence[int] | Values
"""A position: the vertices of its tokens (repeats allowed), or a value per vertex."""


@dataclass(frozen=True)
class TokenMove:
    """Slide token ``token_index`` along the edge ``source_vertex -> target_vertex``."""

    token_index: int
    source_vertex: int
    target_vertex: int


@dataclass(frozen=True)
class SplitMove:
    """Decrement ``vertex`` by one and add one to each of its K picked out-neighbours: each of
    ``odd_targets`` once, and ``pair_target`` ``2 * pair_count`` times."""

    vertex: int
    odd_targets: tuple[int, ...]
    pair_target: int
    pair_count: int


Move = TokenMove | SplitMove


@dataclass(frozen=True)
class AnalysedMove:
    """One move of an analysed position."""

    move: Move
    outcome: Outcome
    """The outcome for the player who makes the move."""
    remoteness: int | None
    """The remoteness of the position the move leads to; None for a drawing move, over the
    budget, or on the Addition-Subtraction game."""
    over_budget: bool


@dataclass(frozen=True)
class QueryError:
    """Why one position could not be evaluated (the other positions are answered)."""

    field: str
    """The offending field, with its index, e.g. ``tokens.vertices[3]``."""
    message: str


@dataclass(frozen=True)
class Verdict:
    """The answer for one position."""

    query_id: int
    """The index of the position in the list asked about."""
    outcome: Outcome | None
    """WIN, LOSE or DRAW; None exactly when ``error`` is set."""
    nim_sum: int
    """The xor of the finite Grundy values of the position's tokens."""
    error: QueryError | None = None
    best_move: Move | None = None
    """With ``explain`` or an analysis: a winning move for WIN, a draw-keeping one for DRAW."""
    remoteness: int | None = None
    """With an analysis: the moves the game lasts with best play; None when unknown."""
    remoteness_unknown: RemotenessUnknown | None = None
    """With an analysis: why ``remoteness`` is None."""
    moves: tuple[AnalysedMove, ...] = ()
    """With an analysis: the position's moves, best first."""
    moves_omitted: int = 0
    """With an analysis: moves left out of ``moves`` by the cap on moves per verdict."""


@dataclass(frozen=True)
class GraphSummary:
    """What the server made of a graph."""

    vertex_count: int
    edge_count: int
    cyclic: bool
    has_split_counts: bool
    max_value: int
    """The largest finite Grundy value of any vertex."""
    graph_id: str
    """The graph's content-addressed id, for ``Client.evaluate`` and ``Client.values``."""
    table_bytes: int


@dataclass(frozen=True)
class InfiniteValue:
    """The infinite value ∞(K) of a vertex on a graph with cycles."""

    finite_followers: tuple[int, ...]
    """K: the finite values of the vertex's followers, increasing."""


@dataclass(frozen=True)
class VertexValue:
    """The value of one vertex of a registered graph."""

    vertex: int
    value: int | InfiniteValue
    """A finite Grundy value (nimber), or ∞(K) on a graph with cycles."""
    counter: int | None
    """On a graph with cycles, for a finite vertex: the rank at which its value was fixed."""
    remoteness: int | None
    """Token sliding: the remoteness of one token on the vertex; None where one token draws."""
