from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PlayConvention(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PLAY_CONVENTION_UNSPECIFIED: _ClassVar[PlayConvention]
    PLAY_CONVENTION_NORMAL: _ClassVar[PlayConvention]
    PLAY_CONVENTION_MISERE: _ClassVar[PlayConvention]

class RemotenessUnknown(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REMOTENESS_UNKNOWN_UNSPECIFIED: _ClassVar[RemotenessUnknown]
    REMOTENESS_UNKNOWN_DRAW: _ClassVar[RemotenessUnknown]
    REMOTENESS_UNKNOWN_OVER_BUDGET: _ClassVar[RemotenessUnknown]
    REMOTENESS_UNKNOWN_NOT_COMPUTED: _ClassVar[RemotenessUnknown]

class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTCOME_UNSPECIFIED: _ClassVar[Outcome]
    OUTCOME_WIN: _ClassVar[Outcome]
    OUTCOME_LOSE: _ClassVar[Outcome]
    OUTCOME_DRAW: _ClassVar[Outcome]
PLAY_CONVENTION_UNSPECIFIED: PlayConvention
PLAY_CONVENTION_NORMAL: PlayConvention
PLAY_CONVENTION_MISERE: PlayConvention
REMOTENESS_UNKNOWN_UNSPECIFIED: RemotenessUnknown
REMOTENESS_UNKNOWN_DRAW: RemotenessUnknown
REMOTENESS_UNKNOWN_OVER_BUDGET: RemotenessUnknown
REMOTENESS_UNKNOWN_NOT_COMPUTED: RemotenessUnknown
OUTCOME_UNSPECIFIED: Outcome
OUTCOME_WIN: Outcome
OUTCOME_LOSE: Outcome
OUTCOME_DRAW: Outcome

class Graph(_message.Message):
    __slots__ = ("vertex_count", "out_degrees", "targets", "split_counts", "fixed_targets")
    VERTEX_COUNT_FIELD_NUMBER: _ClassVar[int]
    OUT_DEGREES_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    SPLIT_COUNTS_FIELD_NUMBER: _ClassVar[int]
    FIXED_TARGETS_FIELD_NUMBER: _ClassVar[int]
    vertex_count: int
    out_degrees: _containers.RepeatedScalarFieldContainer[int]
    targets: _containers.RepeatedScalarFieldContainer[int]
    split_counts: _containers.RepeatedScalarFieldContainer[int]
    fixed_targets: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, vertex_count: _Optional[int] = ..., out_degrees: _Optional[_Iterable[int]] = ..., targets: _Optional[_Iterable[int]] = ..., split_counts: _Optional[_Iterable[int]] = ..., fixed_targets: _Optional[_Iterable[int]] = ...) -> None: ...

class EvaluateRequest(_message.Message):
    __slots__ = ("start", "queries")
    START_FIELD_NUMBER: _ClassVar[int]
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    start: EvaluateStart
    queries: QueryBatch
    def __init__(self, start: _Optional[_Union[EvaluateStart, _Mapping]] = ..., queries: _Optional[_Union[QueryBatch, _Mapping]] = ...) -> None: ...

class EvaluateStart(_message.Message):
    __slots__ = ("graph", "graph_id", "explain", "analysis", "play_convention")
    GRAPH_FIELD_NUMBER: _ClassVar[int]
    GRAPH_ID_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    ANALYSIS_FIELD_NUMBER: _ClassVar[int]
    PLAY_CONVENTION_FIELD_NUMBER: _ClassVar[int]
    graph: Graph
    graph_id: str
    explain: bool
    analysis: AnalysisOptions
    play_convention: PlayConvention
    def __init__(self, graph: _Optional[_Union[Graph, _Mapping]] = ..., graph_id: _Optional[str] = ..., explain: _Optional[bool] = ..., analysis: _Optional[_Union[AnalysisOptions, _Mapping]] = ..., play_convention: _Optional[_Union[PlayConvention, str]] = ...) -> None: ...

class AnalysisOptions(_message.Message):
    __slots__ = ("max_moves", "position_budget")
    MAX_MOVES_FIELD_NUMBER: _ClassVar[int]
    POSITION_BUDGET_FIELD_NUMBER: _ClassVar[int]
    max_moves: int
    position_budget: int
    def __init__(self, max_moves: _Optional[int] = ..., position_budget: _Optional[int] = ...) -> None: ...

class QueryBatch(_message.Message):
    __slots__ = ("queries", "packed_tokens")
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    PACKED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    queries: _containers.RepeatedCompositeFieldContainer[Query]
    packed_tokens: PackedTokenQueries
    def __init__(self, queries: _Optional[_Iterable[_Union[Query, _Mapping]]] = ..., packed_tokens: _Optional[_Union[PackedTokenQueries, _Mapping]] = ...) -> None: ...

class PackedTokenQueries(_message.Message):
    __slots__ = ("first_query_id", "token_counts", "vertices")
    FIRST_QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNTS_FIELD_NUMBER: _ClassVar[int]
    VERTICES_FIELD_NUMBER: _ClassVar[int]
    first_query_id: int
    token_counts: _containers.RepeatedScalarFieldContainer[int]
    vertices: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, first_query_id: _Optional[int] = ..., token_counts: _Optional[_Iterable[int]] = ..., vertices: _Optional[_Iterable[int]] = ...) -> None: ...

class Query(_message.Message):
    __slots__ = ("id", "tokens", "dense_values", "sparse_values")
    ID_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    DENSE_VALUES_FIELD_NUMBER: _ClassVar[int]
    SPARSE_VALUES_FIELD_NUMBER: _ClassVar[int]
    id: int
    tokens: TokenPosition
    dense_values: DenseValues
    sparse_values: SparseValues
    def __init__(self, id: _Optional[int] = ..., tokens: _Optional[_Union[TokenPosition, _Mapping]] = ..., dense_values: _Optional[_Union[DenseValues, _Mapping]] = ..., sparse_values: _Optional[_Union[SparseValues, _Mapping]] = ...) -> None: ...

class TokenPosition(_message.Message):
    __slots__ = ("vertices",)
    VERTICES_FIELD_NUMBER: _ClassVar[int]
    vertices: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, vertices: _Optional[_Iterable[int]] = ...) -> None: ...

class DenseValues(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, values: _Optional[_Iterable[int]] = ...) -> None: ...

class SparseValues(_message.Message):
    __slots__ = ("vertices", "values")
    VERTICES_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    vertices: _containers.RepeatedScalarFieldContainer[int]
    values: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, vertices: _Optional[_Iterable[int]] = ..., values: _Optional[_Iterable[int]] = ...) -> None: ...

class EvaluateResponse(_message.Message):
    __slots__ = ("verdicts", "graph", "packed_verdicts")
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    GRAPH_FIELD_NUMBER: _ClassVar[int]
    PACKED_VERDICTS_FIELD_NUMBER: _ClassVar[int]
    verdicts: _containers.RepeatedCompositeFieldContainer[Verdict]
    graph: GraphSummary
    packed_verdicts: PackedVerdicts
    def __init__(self, verdicts: _Optional[_Iterable[_Union[Verdict, _Mapping]]] = ..., graph: _Optional[_Union[GraphSummary, _Mapping]] = ..., packed_verdicts: _Optional[_Union[PackedVerdicts, _Mapping]] = ...) -> None: ...

class PackedVerdicts(_message.Message):
    __slots__ = ("first_query_id", "outcomes", "nim_sums", "errors", "remotenesses", "over_budget", "move_counts", "move_sources", "move_targets", "move_outcomes", "move_remotenesses", "move_over_budget", "moves_omitted")
    FIRST_QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    NIM_SUMS_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    REMOTENESSES_FIELD_NUMBER: _ClassVar[int]
    OVER_BUDGET_FIELD_NUMBER: _ClassVar[int]
    MOVE_COUNTS_FIELD_NUMBER: _ClassVar[int]
    MOVE_SOURCES_FIELD_NUMBER: _ClassVar[int]
    MOVE_TARGETS_FIELD_NUMBER: _ClassVar[int]
    MOVE_OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    MOVE_REMOTENESSES_FIELD_NUMBER: _ClassVar[int]
    MOVE_OVER_BUDGET_FIELD_NUMBER: _ClassVar[int]
    MOVES_OMITTED_FIELD_NUMBER: _ClassVar[int]
    first_query_id: int
    outcomes: _containers.RepeatedScalarFieldContainer[Outcome]
    nim_sums: _containers.RepeatedScalarFieldContainer[int]
    errors: _containers.RepeatedCompositeFieldContainer[PackedQueryError]
    remotenesses: _containers.RepeatedScalarFieldContainer[int]
    over_budget: _containers.RepeatedScalarFieldContainer[int]
    move_counts: _containers.RepeatedScalarFieldContainer[int]
    move_sources: _containers.RepeatedScalarFieldContainer[int]
    move_targets: _containers.RepeatedScalarFieldContainer[int]
    move_outcomes: _containers.RepeatedScalarFieldContainer[Outcome]
    move_remotenesses: _containers.RepeatedScalarFieldContainer[int]
    move_over_budget: _containers.RepeatedScalarFieldContainer[int]
    moves_omitted: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, first_query_id: _Optional[int] = ..., outcomes: _Optional[_Iterable[_Union[Outcome, str]]] = ..., nim_sums: _Optional[_Iterable[int]] = ..., errors: _Optional[_Iterable[_Union[PackedQueryError, _Mapping]]] = ..., remotenesses: _Optional[_Iterable[int]] = ..., over_budget: _Optional[_Iterable[int]] = ..., move_counts: _Optional[_Iterable[int]] = ..., move_sources: _Optional[_Iterable[int]] = ..., move_targets: _Optional[_Iterable[int]] = ..., move_outcomes: _Optional[_Iterable[_Union[Outcome, str]]] = ..., move_remotenesses: _Optional[_Iterable[int]] = ..., move_over_budget: _Optional[_Iterable[int]] = ..., moves_omitted: _Optional[_Iterable[int]] = ...) -> None: ...

class PackedQueryError(_message.Message):
    __slots__ = ("index", "error")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    index: int
    error: QueryError
    def __init__(self, index: _Optional[int] = ..., error: _Optional[_Union[QueryError, _Mapping]] = ...) -> None: ...

class GraphSummary(_message.Message):
    __slots__ = ("vertex_count", "edge_count", "cyclic", "has_split_counts", "max_value", "graph_id", "table_bytes")
    VERTEX_COUNT_FIELD_NUMBER: _ClassVar[int]
    EDGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    CYCLIC_FIELD_NUMBER: _ClassVar[int]
    HAS_SPLIT_COUNTS_FIELD_NUMBER: _ClassVar[int]
    MAX_VALUE_FIELD_NUMBER: _ClassVar[int]
    GRAPH_ID_FIELD_NUMBER: _ClassVar[int]
    TABLE_BYTES_FIELD_NUMBER: _ClassVar[int]
    vertex_count: int
    edge_count: int
    cyclic: bool
    has_split_counts: bool
    max_value: int
    graph_id: str
    table_bytes: int
    def __init__(self, vertex_count: _Optional[int] = ..., edge_count: _Optional[int] = ..., cyclic: _Optional[bool] = ..., has_split_counts: _Optional[bool] = ..., max_value: _Optional[int] = ..., graph_id: _Optional[str] = ..., table_bytes: _Optional[int] = ...) -> None: ...

class Verdict(_message.Message):
    __slots__ = ("query_id", "outcome", "nim_sum", "error", "best_move", "remoteness", "remoteness_unknown", "moves", "moves_omitted")
    QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    NIM_SUM_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    BEST_MOVE_FIELD_NUMBER: _ClassVar[int]
    REMOTENESS_FIELD_NUMBER: _ClassVar[int]
    REMOTENESS_UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    MOVES_FIELD_NUMBER: _ClassVar[int]
    MOVES_OMITTED_FIELD_NUMBER: _ClassVar[int]
    query_id: int
    outcome: Outcome
    nim_sum: int
    error: QueryError
    best_move: Move
    remoteness: int
    remoteness_unknown: RemotenessUnknown
    moves: _containers.RepeatedCompositeFieldContainer[AnalysedMove]
    moves_omitted: int
    def __init__(self, query_id: _Optional[int] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., nim_sum: _Optional[int] = ..., error: _Optional[_Union[QueryError, _Mapping]] = ..., best_move: _Optional[_Union[Move, _Mapping]] = ..., remoteness: _Optional[int] = ..., remoteness_unknown: _Optional[_Union[RemotenessUnknown, str]] = ..., moves: _Optional[_Iterable[_Union[AnalysedMove, _Mapping]]] = ..., moves_omitted: _Optional[int] = ...) -> None: ...

class AnalysedMove(_message.Message):
    __slots__ = ("move", "outcome", "remoteness", "over_budget")
    MOVE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REMOTENESS_FIELD_NUMBER: _ClassVar[int]
    OVER_BUDGET_FIELD_NUMBER: _ClassVar[int]
    move: Move
    outcome: Outcome
    remoteness: int
    over_budget: bool
    def __init__(self, move: _Optional[_Union[Move, _Mapping]] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., remoteness: _Optional[int] = ..., over_budget: _Optional[bool] = ...) -> None: ...

class QueryError(_message.Message):
    __slots__ = ("field", "message")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    field: str
    message: str
    def __init__(self, field: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Move(_message.Message):
    __slots__ = ("token", "split")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    SPLIT_FIELD_NUMBER: _ClassVar[int]
    token: TokenMove
    split: SplitMove
    def __init__(self, token: _Optional[_Union[TokenMove, _Mapping]] = ..., split: _Optional[_Union[SplitMove, _Mapping]] = ...) -> None: ...

class TokenMove(_message.Message):
    __slots__ = ("token_index", "source_vertex", "target_vertex")
    TOKEN_INDEX_FIELD_NUMBER: _ClassVar[int]
    SOURCE_VERTEX_FIELD_NUMBER: _ClassVar[int]
    TARGET_VERTEX_FIELD_NUMBER: _ClassVar[int]
    token_index: int
    source_vertex: int
    target_vertex: int
    def __init__(self, token_index: _Optional[int] = ..., source_vertex: _Optional[int] = ..., target_vertex: _Optional[int] = ...) -> None: ...

class SplitMove(_message.Message):
    __slots__ = ("vertex", "odd_targets", "pair_target", "pair_count")
    VERTEX_FIELD_NUMBER: _ClassVar[int]
    ODD_TARGETS_FIELD_NUMBER: _ClassVar[int]
    PAIR_TARGET_FIELD_NUMBER: _ClassVar[int]
    PAIR_COUNT_FIELD_NUMBER: _ClassVar[int]
    vertex: int
    odd_targets: _containers.RepeatedScalarFieldContainer[int]
    pair_target: int
    pair_count: int
    def __init__(self, vertex: _Optional[int] = ..., odd_targets: _Optional[_Iterable[int]] = ..., pair_target: _Optional[int] = ..., pair_count: _Optional[int] = ...) -> None: ...

class EvaluateBatchRequest(_message.Message):
    __slots__ = ("start", "queries")
    START_FIELD_NUMBER: _ClassVar[int]
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    start: EvaluateStart
    queries: _containers.RepeatedCompositeFieldContainer[Query]
    def __init__(self, start: _Optional[_Union[EvaluateStart, _Mapping]] = ..., queries: _Optional[_Iterable[_Union[Query, _Mapping]]] = ...) -> None: ...

class EvaluateBatchResponse(_message.Message):
    __slots__ = ("verdicts", "graph")
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    GRAPH_FIELD_NUMBER: _ClassVar[int]
    verdicts: _containers.RepeatedCompositeFieldContainer[Verdict]
    graph: GraphSummary
    def __init__(self, verdicts: _Optional[_Iterable[_Union[Verdict, _Mapping]]] = ..., graph: _Optional[_Union[GraphSummary, _Mapping]] = ...) -> None: ...

class PutGraphRequest(_message.Message):
    __slots__ = ("chunk",)
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    chunk: Graph
    def __init__(self, chunk: _Optional[_Union[Graph, _Mapping]] = ...) -> None: ...

class PutGraphResponse(_message.Message):
    __slots__ = ("graph_id", "graph", "already_registered")
    GRAPH_ID_FIELD_NUMBER: _ClassVar[int]
    GRAPH_FIELD_NUMBER: _ClassVar[int]
    ALREADY_REGISTERED_FIELD_NUMBER: _ClassVar[int]
    graph_id: str
    graph: GraphSummary
    already_registered: bool
    def __init__(self, graph_id: _Optional[str] = ..., graph: _Optional[_Union[GraphSummary, _Mapping]] = ..., already_registered: _Optional[bool] = ...) -> None: ...

class GetValuesRequest(_message.Message):
    __slots__ = ("graph_id", "first_vertex", "vertex_limit", "page_size", "summary_only", "play_convention")
    GRAPH_ID_FIELD_NUMBER: _ClassVar[int]
    FIRST_VERTEX_FIELD_NUMBER: _ClassVar[int]
    VERTEX_LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_ONLY_FIELD_NUMBER: _ClassVar[int]
    PLAY_CONVENTION_FIELD_NUMBER: _ClassVar[int]
    graph_id: str
    first_vertex: int
    vertex_limit: int
    page_size: int
    summary_only: bool
    play_convention: PlayConvention
    def __init__(self, graph_id: _Optional[str] = ..., first_vertex: _Optional[int] = ..., vertex_limit: _Optional[int] = ..., page_size: _Optional[int] = ..., summary_only: _Optional[bool] = ..., play_convention: _Optional[_Union[PlayConvention, str]] = ...) -> None: ...

class GetValuesResponse(_message.Message):
    __slots__ = ("graph", "first_vertex", "values")
    GRAPH_FIELD_NUMBER: _ClassVar[int]
    FIRST_VERTEX_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    graph: GraphSummary
    first_vertex: int
    values: _containers.RepeatedCompositeFieldContainer[VertexValue]
    def __init__(self, graph: _Optional[_Union[GraphSummary, _Mapping]] = ..., first_vertex: _Optional[int] = ..., values: _Optional[_Iterable[_Union[VertexValue, _Mapping]]] = ...) -> None: ...

class VertexValue(_message.Message):
    __slots__ = ("finite", "infinite", "counter", "remoteness", "outcome")
    FINITE_FIELD_NUMBER: _ClassVar[int]
    INFINITE_FIELD_NUMBER: _ClassVar[int]
    COUNTER_FIELD_NUMBER: _ClassVar[int]
    REMOTENESS_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    finite: int
    infinite: InfiniteValue
    counter: int
    remoteness: int
    outcome: Outcome
    def __init__(self, finite: _Optional[int] = ..., infinite: _Optional[_Union[InfiniteValue, _Mapping]] = ..., counter: _Optional[int] = ..., remoteness: _Optional[int] = ..., outcome: _Optional[_Union[Outcome, str]] = ...) -> None: ...

class InfiniteValue(_message.Message):
    __slots__ = ("finite_followers",)
    FINITE_FOLLOWERS_FIELD_NUMBER: _ClassVar[int]
    finite_followers: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, finite_followers: _Optional[_Iterable[int]] = ...) -> None: ...
