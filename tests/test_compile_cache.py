"""Numba's disk cache is keyed on every jitted source (:mod:`qdecode.compile_cache`), so editing a
helper in one kernel module recompiles its callers in other modules instead of running stale code.

The end-to-end tests copy ``qdecode/`` into ``tmp_path``, add two fixture modules to the copy's
``kernels/`` (a helper, and a cached jitted caller in another file) and run fresh interpreters
on the copy (``PYTHONPATH``, and the copy as working directory) with ``QDECODE_CACHE_DIR`` in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import qdecode.compile_cache as cc

PKG = Path(cc.__file__).resolve().parents[1]

HELPER = "import numba\n\nSTEP = {step}\n\n\n@numba.njit\ndef bump(x):\n    return x + STEP\n"
CALLER = (
    "import numba\n\nfrom qdecode.kernels._cc_helper import bump\n\n\n"
    "@numba.njit(cache=True)\ndef twice_bumped(x):\n    return 2 * bump(x)\n"
)
RUN = (
    "import json, os, qdecode\n"
    "from qdecode.kernels._cc_caller import twice_bumped\n"
    "assert qdecode.__file__.startswith(os.environ['PYTHONPATH']), qdecode.__file__\n"
    "value = int(twice_bumped(1))\n"
    "st = twice_bumped.stats\n"
    "print(json.dumps({'value': value, 'hits': sum(st.cache_hits.values()),\n"
    "                  'dir': os.environ.get('NUMBA_CACHE_DIR'), 'cache_path': st.cache_path}))\n"
)
_OUR_ENV = ("NUMBA_CACHE_DIR", "QDECODE_CACHE_DIR", cc._ENV_SET, cc._ENV_USER)


def _clean_env(**extra: str) -> dict[str, str]:
    """os.environ without the cache settings this (pytest) process got from ``import qdecode``."""
    env = {k: v for k, v in os.environ.items() if k not in _OUR_ENV}
    env.update(extra)
    return env


@pytest.fixture()
def copy(tmp_path):
    """A copy of ``qdecode/`` with the helper/caller fixture modules; returns its parent folder."""
    root = tmp_path / "src"
    shutil.copytree(PKG, root / "qdecode", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "qdecode" / "kernels" / "_cc_helper.py").write_text(HELPER.format(step=1))
    (root / "qdecode" / "kernels" / "_cc_caller.py").write_text(CALLER)
    return root


def _run(root: Path, cache: Path) -> dict:
    env = _clean_env(PYTHONPATH=str(root), QDECODE_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, "-c", RUN], env=env, cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_editing_a_helper_in_another_module_recompiles_the_caller(copy, tmp_path):
    cache = tmp_path / "cache"
    first = _run(copy, cache)
    assert first["value"] == 4 and first["hits"] == 0
    (key_dir,) = cc.key_dirs(cache)
    assert first["dir"] == str(key_dir) and first["cache_path"].startswith(str(key_dir))
    assert list(key_dir.rglob("*.nbi")) and list(key_dir.rglob("*.nbc"))
    assert not list((copy / "qdecode").rglob("*.nbi"))  # nothing in the source tree's __pycache__

    again = _run(copy, cache)  # unchanged sources: same directory, loaded from the cache
    assert again == {**first, "hits": 1}
    assert cc.key_dirs(cache) == [key_dir]

    helper = copy / "qdecode" / "kernels" / "_cc_helper.py"
    helper.write_text(HELPER.format(step=2))  # the caller's file (numba's own index key) is untouched
    edited = _run(copy, cache)
    assert edited["value"] == 6 and edited["hits"] == 0
    dirs = cc.key_dirs(cache)
    assert len(dirs) == 2 and key_dir in dirs and edited["dir"] != first["dir"]

    helper.write_text(HELPER.format(step=1))  # reverting finds the first directory again
    assert _run(copy, cache) == {**first, "hits": 1}


def test_import_works_when_the_cache_dir_cannot_be_made(copy, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    code = (
        "import os, qdecode\n"
        "import qdecode.compile_cache as cc\n"
        "assert cc.where() is None and 'NotADirectory' in cc.reason, cc.reason\n"
        "assert 'NUMBA_CACHE_DIR' not in os.environ\n"
        "from qdecode.kernels._cc_caller import twice_bumped\n"
        "assert twice_bumped(1) == 4\n"
    )
    # an inherited NUMBA_CACHE_DIR that qdecode set in a parent process is dropped, not used
    env = _clean_env(PYTHONPATH=str(copy), QDECODE_CACHE_DIR=str(blocker / "cache"),
                     NUMBA_CACHE_DIR=str(tmp_path / "parent"), **{cc._ENV_SET: str(tmp_path / "parent")})
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=copy, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    out = subprocess.run([sys.executable, "-m", "qdecode.compile_cache", "--where"], env=env, cwd=copy,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "numba's default" in out.stdout, out.stdout + out.stderr


def test_spawned_workers_use_the_same_directory_under_a_users_numba_cache_dir(tmp_path):
    code = (
        "import multiprocessing as mp, qdecode\n"
        "import qdecode.compile_cache as cc\n"
        "with mp.get_context('spawn').Pool(1) as pool:\n"
        "    print(cc.where(), pool.apply(cc.where), sep='\\n')\n"
    )
    env = _clean_env(NUMBA_CACHE_DIR=str(tmp_path / "user"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    parent, worker = out.stdout.split()
    assert parent == worker == str(tmp_path / "user" / "qdecode" / cc.source_key())


def _tree(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    for rel, text in {"kernels/a.py": "X = 1\n", "decoders/b.py": "import numba\n", "sims/c.py": "Y = 1\n",
                      "__init__.py": ""}.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    return pkg


def test_key_follows_the_jitted_sources_only(tmp_path):
    pkg = _tree(tmp_path)
    assert [p.relative_to(pkg).as_posix() for p in cc.jit_sources(pkg)] == ["decoders/b.py", "kernels/a.py"]
    key = cc.source_key(pkg)
    assert len(key) == 16 and key == cc.source_key(pkg)
    (pkg / "sims" / "c.py").write_text("Y = 2\n")  # no numba in it: same key
    (pkg / "sims" / "__pycache__").mkdir()
    (pkg / "sims" / "__pycache__" / "numba.py").write_text("import numba\n")
    assert cc.source_key(pkg) == key
    keys = {key}
    for rel, text in [("kernels/a.py", "X = 2\n"), ("decoders/b.py", "import numba  # edited\n"),
                      ("sims/c.py", "import numba\n"), ("hw/new.py", "from numba import njit\n")]:
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
        keys.add(cc.source_key(pkg))
    assert len(keys) == 5


def test_cache_root_order():
    assert cc.cache_root({"QDECODE_CACHE_DIR": "/q", "NUMBA_CACHE_DIR": "/n"}) == Path("/q")
    assert cc.cache_root({"NUMBA_CACHE_DIR": "/n", "XDG_CACHE_HOME": "/x"}) == Path("/n/qdecode")
    assert cc.cache_root({"XDG_CACHE_HOME": "/x"}) == Path("/x/qdecode/numba")
    # the value qdecode itself exported (inherited by a worker) is not the user's
    inherited = {"NUMBA_CACHE_DIR": "/n/qdecode/0123456789abcdef", cc._ENV_SET: "/n/qdecode/0123456789abcdef",
                 cc._ENV_USER: "/n"}
    assert cc.cache_root(inherited) == Path("/n/qdecode")
    assert cc.cache_root({**inherited, cc._ENV_USER: "", "XDG_CACHE_HOME": "/x"}) == Path("/x/qdecode/numba")


def test_configure_with_an_env_dict(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "user")}
    path = cc.configure(env)
    assert path == tmp_path / "user" / "qdecode" / cc.source_key() and path.is_dir()
    assert env["NUMBA_CACHE_DIR"] == str(path) and env[cc._ENV_USER] == str(tmp_path / "user")
    assert cc.configure(dict(env)) == path  # a child process with the inherited environment


def test_prune_keeps_the_newest(tmp_path):
    names = [f"{i:016x}" for i in range(7)]
    for age, name in enumerate(names):  # names[0] newest
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (1e9 - age, 1e9 - age))
    (tmp_path / "not-a-key").mkdir()
    (tmp_path / "fedcba9876543210").write_text("a file, not a key directory")
    current = tmp_path / names[-1]  # the oldest, but in use
    removed = cc.prune(tmp_path, keep=4, current=current)
    assert sorted(p.name for p in removed) == names[3:6]
    assert [p.name for p in cc.key_dirs(tmp_path)] == [*names[:3], names[-1]]
    assert (tmp_path / "not-a-key").is_dir() and (tmp_path / "fedcba9876543210").is_file()
    assert [p.name for p in cc.prune(tmp_path, keep=1)] == names[1:3] + [names[-1]]
    assert cc.prune(tmp_path / "missing") == []
