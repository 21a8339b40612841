"""The server's address, in the forms grundy's CLI takes: HOST:PORT or http://HOST:PORT
(plaintext), https://HOST:PORT (TLS)."""

from __future__ import annotations

from dataclasses import dataclass

# How much of a refused address an error message quotes.
_EXCERPT = 60


@dataclass(frozen=True)
class Target:
    """Where to connect: ``address`` as gRPC takes it (HOST:PORT), and whether with TLS."""

    address: str
    tls: bool


def parse_target(url: str) -> Target:
    """The target of ``url``; ValueError, quoting it, when it is not HOST:PORT,
    http://HOST:PORT or https://HOST:PORT (an IPv6 host in brackets: ``[::1]:50051``)."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        scheme, rest = "http", url
    rest = rest.removesuffix("/")
    host, colon, port = rest.rpartition(":")
    bracketed = host.startswith("[") and host.endswith("]")
    if (
        scheme not in ("http", "https")
        or not host
        or not colon
        or "/" in rest
        or (":" in host and not bracketed)
        or not port.isdigit()
        or not 0 < int(port) < 65536
    ):
        shown = url if len(url) <= _EXCERPT else url[:_EXCERPT] + "..."
        raise ValueError(
            "the server must be HOST:PORT, http://HOST:PORT (plaintext) or https://HOST:PORT "
            f"(TLS), e.g. http://127.0.0.1:50051, not {shown!r}"
        )
    return Target(address=rest, tls=scheme == "https")
