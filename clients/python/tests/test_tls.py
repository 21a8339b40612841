"""A TLS server, its certificate verified against a CA file (skipped without openssl)."""

from __future__ import annotations

import os
import pathlib

import pytest
from conftest import CALL_TIMEOUT

from grundy import Client, Graph, Outcome, Unavailable

TLS_SERVER = os.environ.get("GRUNDY_TEST_TLS_SERVER")
TLS_CA = os.environ.get("GRUNDY_TEST_TLS_CA")

pytestmark = pytest.mark.skipif(
    not (TLS_SERVER and TLS_CA),
    reason="no TLS server (scripts/python-package-test.sh makes one with openssl)",
)


def test_https_with_a_ca_file_or_its_bytes_evaluates() -> None:
    assert TLS_SERVER and TLS_CA
    graph = Graph.from_adjacency([[1], []])
    ca_bytes = pathlib.Path(TLS_CA).read_bytes()
    for tls_ca in (TLS_CA, pathlib.Path(TLS_CA), ca_bytes):
        with Client(f"https://{TLS_SERVER}", tls_ca=tls_ca, timeout=CALL_TIMEOUT) as client:
            client.wait_ready(timeout=CALL_TIMEOUT)
            (verdict,) = client.evaluate(graph, [[0]])
            assert verdict.outcome is Outcome.WIN


def test_https_without_the_ca_is_unavailable() -> None:
    assert TLS_SERVER
    # The system's roots do not know the test's certificate: the handshake fails.
    with Client(f"https://{TLS_SERVER}", timeout=CALL_TIMEOUT) as client:
        with pytest.raises(Unavailable, match="with TLS and a certificate"):
            client.wait_ready(timeout=CALL_TIMEOUT)


def test_plaintext_to_a_tls_server_is_unavailable() -> None:
    assert TLS_SERVER
    with Client(f"http://{TLS_SERVER}", timeout=CALL_TIMEOUT) as client:
        with pytest.raises(Unavailable):
            client.evaluate(Graph.from_adjacency([[]]), [[0]])
