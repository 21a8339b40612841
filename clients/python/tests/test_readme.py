"""The ```python blocks of clients/python/README.md run as written, against the test server
(its address for the README's 127.0.0.1:50051), and print what they say they print."""

from __future__ import annotations

import pathlib
import re

import pytest
from conftest import server

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"

# What each block prints, in order.
PRINTED = [
    "Outcome.WIN 2 TokenMove(token_index=0, source_vertex=0, target_vertex=1)\n"
    "Outcome.WIN 3 TokenMove(token_index=0, source_vertex=0, target_vertex=2)\n",
    "INVALID_GRAPH\ntargets[2]\n",
]


def test_the_readme_blocks_run_and_print_what_they_say(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == len(PRINTED)
    address = server("GRUNDY_TEST_SERVER")
    for block, printed in zip(blocks, PRINTED):
        assert "127.0.0.1:50051" in block
        exec(block.replace("127.0.0.1:50051", address), {})
        assert capsys.readouterr().out == printed
