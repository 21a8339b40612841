"""The servers the tests call: scripts/python-package-test.sh starts each grundy-server on
127.0.0.1 and passes its address in an environment variable.

- GRUNDY_TEST_SERVER: plaintext, no token, --max-vertices 1000;
- GRUNDY_TEST_AUTH_SERVER: plaintext, --auth-token-file holding GRUNDY_TEST_AUTH_TOKEN;
- GRUNDY_TEST_LIMITED_SERVER: plaintext, --max-concurrent-streams 1 (one test at a time);
- GRUNDY_TEST_TLS_SERVER: TLS, its certificate signed by GRUNDY_TEST_TLS_CA (unset without
  openssl: those tests are skipped).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from grundy import Client, Graph

# Each call's deadline in the tests, in seconds: a hung call fails, it does not hang.
CALL_TIMEOUT = 20.0


def server(variable: str) -> str:
    address = os.environ.get(variable)
    if not address:
        pytest.fail(f"{variable} is unset: run the tests with scripts/python-package-test.sh")
    return address


@pytest.fixture
def client() -> Iterator[Client]:
    with Client(server("GRUNDY_TEST_SERVER"), timeout=CALL_TIMEOUT) as connected:
        yield connected


@pytest.fixture
def cyclic_graph() -> Graph:
    """Token sliding with every outcome: 0 <-> 1 draw (∞ with K = {}), 2 a sink (value 0),
    3 -> 2 (value 1), 4 -> 0 or 2 (∞ with K = {0}: one token wins by moving to 2)."""
    return Graph.from_adjacency([[1], [0], [], [2], [0, 2]])
