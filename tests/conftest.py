"""Shared fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture()
def cli_error(capsys):
    """Run ``qdecode ARGV``; assert exit status 2 and one stderr line ``qdecode <cmd>: error: ...``; return it."""
    from qdecode.cli.main import main

    def run(argv):
        capsys.readouterr()  # drop earlier output
        code = main(argv)
        err = capsys.readouterr().err.strip()
        assert code == 2, err
        assert len(err.splitlines()) == 1, err
        assert err.startswith(f"qdecode {argv[0]}: error: "), err
        assert "Traceback" not in err and "__init__" not in err  # the real problem, not Python internals
        return err

    return run
