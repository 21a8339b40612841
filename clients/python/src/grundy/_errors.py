"""A failed call as an exception: one class per gRPC status code, carrying the status's
message and the google.rpc error details the server attached (the ``grpc-status-details-bin``
trailer): the ErrorInfo's reason and metadata, the BadRequest's field violations, the
QuotaFailure's violations and the RetryInfo's delay (proto/grundy/v1/errors.proto)."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError, Message
from google.rpc import error_details_pb2, status_pb2

_Detail = TypeVar("_Detail", bound=Message)

# The trailer of the google.rpc.Status, the error model's details.
_DETAILS_KEY = "grpc-status-details-bin"

# The detail types decoded; any other stays a google.protobuf.Any in ``details``.
_DETAIL_TYPES: tuple[type[Message], ...] = (
    error_details_pb2.ErrorInfo,
    error_details_pb2.BadRequest,
    error_details_pb2.QuotaFailure,
    error_details_pb2.RetryInfo,
    error_details_pb2.DebugInfo,
    error_details_pb2.ResourceInfo,
    error_details_pb2.Help,
    error_details_pb2.LocalizedMessage,
    error_details_pb2.PreconditionFailure,
    error_details_pb2.RequestInfo,
)


@dataclass(frozen=True)
class FieldViolation:
    """A BadRequest field violation: the field, with its index (``targets[2]``), and why."""

    field: str
    description: str


@dataclass(frozen=True)
class QuotaViolation:
    """A QuotaFailure violation: the limit's name (``max_edges``), and what exceeded it."""

    subject: str
    description: str


class GrundyError(Exception):
    """A call that ended with an error status. Subclasses name the common codes; a code
    without one is raised as GrundyError itself."""

    code: grpc.StatusCode
    """The status code."""
    message: str
    """The status message: what failed, naming the field or limit."""
    details: tuple[Message, ...]
    """Every google.rpc detail, decoded (an unknown type stays a google.protobuf.Any)."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        details: tuple[Message, ...] = (),
    ) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.details = details

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> GrundyError:
        """The exception of a call that failed with ``error``, for calls made with the
        generated stub (``Client.stub``): of the subclass its code names."""
        return from_rpc_error(error)

    @property
    def reason(self) -> str | None:
        """The ErrorInfo's stable reason (``INVALID_GRAPH``, ``UNKNOWN_GRAPH``, ...)."""
        info = self._first(error_details_pb2.ErrorInfo)
        return info.reason if info is not None else None

    @property
    def domain(self) -> str | None:
        """The ErrorInfo's domain: ``grundy.v1`` for every error the server makes."""
        info = self._first(error_details_pb2.ErrorInfo)
        return info.domain if info is not None else None

    @property
    def metadata(self) -> Mapping[str, str]:
        """The ErrorInfo's metadata (``limit``, ``limit_value``, ``timeout_ms``, ...)."""
        info = self._first(error_details_pb2.ErrorInfo)
        return dict(info.metadata) if info is not None else {}

    @property
    def field_violations(self) -> tuple[FieldViolation, ...]:
        """The BadRequest's field violations."""
        return tuple(
            FieldViolation(violation.field, violation.description)
            for detail in self.details
            if isinstance(detail, error_details_pb2.BadRequest)
            for violation in detail.field_violations
        )

    @property
    def quota_violations(self) -> tuple[QuotaViolation, ...]:
        """The QuotaFailure's violations."""
        return tuple(
            QuotaViolation(violation.subject, violation.description)
            for detail in self.details
            if isinstance(detail, error_details_pb2.QuotaFailure)
            for violation in detail.violations
        )

    @property
    def retry_delay(self) -> datetime.timedelta | None:
        """The RetryInfo's delay: how long to wait before retrying; None when not retryable."""
        info = self._first(error_details_pb2.RetryInfo)
        if info is None or not info.HasField("retry_delay"):
            return None
        delay: datetime.timedelta = info.retry_delay.ToTimedelta()
        return delay

    def _first(self, kind: type[_Detail]) -> _Detail | None:
        return next((detail for detail in self.details if isinstance(detail, kind)), None)


class Cancelled(GrundyError):
    """CANCELLED: the call, or the analysis it waited for, was cancelled."""


class InvalidArgument(GrundyError):
    """INVALID_ARGUMENT: a malformed graph or request; ``field_violations`` names the field."""


class DeadlineExceeded(GrundyError):
    """DEADLINE_EXCEEDED: the call's deadline passed (or the server's start or idle timeout)."""


class NotFound(GrundyError):
    """NOT_FOUND: the graph id is not (or no longer) registered: upload the graph again."""


class ResourceExhausted(GrundyError):
    """RESOURCE_EXHAUSTED: a server limit; ``metadata`` names it (``limit``, ``limit_value``)."""


class Unimplemented(GrundyError):
    """UNIMPLEMENTED: the server does not serve this method."""


class Internal(GrundyError):
    """INTERNAL: a fault of the server, never the caller's."""


class Unavailable(GrundyError):
    """UNAVAILABLE: no connection, or the server is draining or overloaded: retry after
    ``retry_delay``."""


class Unauthenticated(GrundyError):
    """UNAUTHENTICATED: the server wants a bearer token (``Client(token=...)``), or another."""


_BY_CODE: dict[grpc.StatusCode, type[GrundyError]] = {
    grpc.StatusCode.CANCELLED: Cancelled,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.UNIMPLEMENTED: Unimplemented,
    grpc.StatusCode.INTERNAL: Internal,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
}


def error_for(code: grpc.StatusCode, text: str, details: tuple[Message, ...] = ()) -> GrundyError:
    """The exception of a status: its code's class, or GrundyError."""
    return _BY_CODE.get(code, GrundyError)(code, text, details)


def from_rpc_error(error: grpc.RpcError) -> GrundyError:
    """The exception of a failed call (a ``grpc.RpcError`` that is also a ``grpc.Call``)."""
    if not isinstance(error, grpc.Call):
        return GrundyError(grpc.StatusCode.UNKNOWN, str(error))
    code = error.code() or grpc.StatusCode.UNKNOWN
    return error_for(code, error.details() or "", _decoded_details(error.trailing_metadata()))


def _decoded_details(trailers: Sequence[tuple[str, str | bytes]] | None) -> tuple[Message, ...]:
    """The details of the google.rpc.Status in ``trailers``; none when it is missing or does
    not decode (an error is reported, never replaced by another)."""
    raw = next(
        (value for key, value in (trailers or ()) if key == _DETAILS_KEY),
        None,
    )
    if not isinstance(raw, bytes):
        return ()
    try:
        status = status_pb2.Status.FromString(raw)
    except DecodeError:
        return ()
    return tuple(_decoded(detail) for detail in status.details)


def _decoded(detail: any_pb2.Any) -> Message:
    for kind in _DETAIL_TYPES:
        if detail.TypeName() == kind.DESCRIPTOR.full_name:
            decoded = kind()
            if detail.Unpack(decoded):
                return decoded
    return detail
