"""Numba's on-disk cache for qdecode, keyed on the source of all of qdecode's jitted code.

Why: numba's own cache index checks only the modification time of the file that holds the
function it compiled. A kernel in ``kernels/bp.py`` that inlines a helper from ``kernels/minsum.py``
would keep running the old machine code after ``minsum.py`` changes, without a warning. So qdecode
points numba's cache at a directory named after a hash of everything that code can depend on.

Key: the first 16 hex digits of a BLAKE2b hash of the Python version, the numba and llvmlite
versions (their ``_version.py`` files, read without importing them), and the relative path and
bytes of every ``.py`` under the ``qdecode/`` folder whose text contains ``numba`` plus every
``.py`` under ``qdecode/kernels/``. The set is found anew at each import (reading the ~100 files
of ``qdecode/`` takes about 4 ms), so a new module with jitted code is covered without a list to
update. Editing any of those files moves the cache to a fresh directory; reverting the edit finds
the old one again.

Where (``<key>`` is the hash):

* ``$QDECODE_CACHE_DIR/<key>`` when ``QDECODE_CACHE_DIR`` is set;
* else ``$NUMBA_CACHE_DIR/qdecode/<key>`` when the user set ``NUMBA_CACHE_DIR``;
* else ``$XDG_CACHE_HOME/qdecode/numba/<key>`` (``~/.cache/qdecode/numba/<key>`` without it).

How: :func:`configure` runs first in ``qdecode/__init__.py``, before any module with
``@numba.njit(cache=True)`` functions can be imported. It sets ``NUMBA_CACHE_DIR`` in
``os.environ`` (and ``numba.config.CACHE_DIR`` when numba is already imported); numba's
``UserProvidedCacheLocator`` reads ``config.CACHE_DIR`` when a function is decorated and puts its
index (``.nbi``) and code (``.nbc``) files under that directory. Setting the environment variable,
not only the config attribute, keeps the setting when numba re-reads its environment (it does so
whenever a ``NUMBA_*`` variable changes) and hands it to worker processes; a spawned worker that
imports qdecode computes the same key and so uses the same directory. Other numba code in the same
process (and its child processes) caches there too. ``import qdecode`` still does not import numba.

The 4 most recently used key directories are kept; older ones are deleted when a new one is
made (errors ignored, so concurrent processes do not trip over each other; numba recreates a
directory it finds gone). If the directory cannot be created or written, qdecode leaves numba's
default (``__pycache__`` next to each source file, with the staleness described above) and never
fails to import; ``--where`` says so.

Print or clear it (``qdecode/compile_cache/__main__.py``)::

    python -m qdecode.compile_cache --where   # the active directory (or why there is none)
    python -m qdecode.compile_cache --clear   # delete every key directory under the cache root

``.nbi`` / ``.nbc`` files that older versions left in ``qdecode/**/__pycache__/`` are no longer
read; they can be deleted.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
from pathlib import Path

#: Key directories kept by :func:`prune` (the newest by modification time; ``configure`` touches
#: the active one at every import, so this is "most recently used").
KEEP = 4
_KEY_LEN = 16
_PKG = Path(__file__).resolve().parents[1]  # the qdecode/ folder
#: Environment variables that mark ``NUMBA_CACHE_DIR`` as set by qdecode (inherited by child
#: processes, which must not mistake it for the user's own setting and nest inside it).
_ENV_SET = "_QDECODE_NUMBA_CACHE_DIR"
_ENV_USER = "_QDECODE_USER_NUMBA_CACHE_DIR"

#: The directory numba caches qdecode's kernels in, or None (numba's default); see ``reason``.
active: Path | None = None
#: Why ``active`` is None (empty when it is set).
reason: str = "configure() has not run"


def _jit_files(pkg: Path) -> list[tuple[Path, bytes]]:
    out = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).parts
        if "__pycache__" in rel:
            continue
        data = path.read_bytes()
        if rel[0] == "kernels" or b"numba" in data:
            out.append((path, data))
    return out


def jit_sources(pkg: Path = _PKG) -> list[Path]:
    """The ``.py`` files under ``pkg`` the key covers: all of ``kernels/`` and every other file whose
    text contains ``numba``, sorted."""
    return [path for path, _ in _jit_files(pkg)]


def _dist_version_bytes(name: str) -> bytes:
    """``name``'s location and the bytes of its ``_version.py``, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return b"-"
    if spec is None or not spec.submodule_search_locations:
        return b"-"
    loc = Path(next(iter(spec.submodule_search_locations)))
    try:
        return str(loc).encode() + (loc / "_version.py").read_bytes()
    except OSError:
        return str(loc).encode()


def source_key(pkg: Path = _PKG) -> str:
    """The cache key: 16 hex digits of BLAKE2b over Python, numba and llvmlite versions and the
    relative paths and bytes of :func:`jit_sources`."""
    h = hashlib.blake2b(digest_size=16)
    h.update(sys.version.encode() + b"\0" + sys.implementation.cache_tag.encode() + b"\0")
    for name in ("numba", "llvmlite"):
        h.update(_dist_version_bytes(name) + b"\0")
    for path, data in _jit_files(pkg):
        h.update(path.relative_to(pkg).as_posix().encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()[:_KEY_LEN]


def _user_numba_cache_dir(env) -> str:
    """``NUMBA_CACHE_DIR`` as the user set it: not the value qdecode put there (maybe in a parent)."""
    value = env.get("NUMBA_CACHE_DIR", "")
    if value and value == env.get(_ENV_SET):
        return env.get(_ENV_USER, "")
    return value


def cache_root(env=None) -> Path:
    """The folder holding one directory per key (see the module docstring for the order)."""
    env = os.environ if env is None else env
    if env.get("QDECODE_CACHE_DIR"):
        return Path(env["QDECODE_CACHE_DIR"]).expanduser()
    user = _user_numba_cache_dir(env)
    if user:
        return Path(user).expanduser() / "qdecode"
    xdg = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "qdecode" / "numba"


def _is_key_dir(path: Path) -> bool:
    name = path.name
    return len(name) == _KEY_LEN and all(c in "0123456789abcdef" for c in name) and path.is_dir()


def key_dirs(root: Path) -> list[Path]:
    """The key directories under ``root``, newest (by modification time) first."""
    out = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return []
    for path in entries:
        try:
            if _is_key_dir(path):
                out.append((path.stat().st_mtime, path))
        except OSError:  # removed meanwhile by another process
            continue
    return [p for _, p in sorted(out, key=lambda t: t[0], reverse=True)]


def prune(root: Path, keep: int = KEEP, current: Path | None = None) -> list[Path]:
    """Delete all but the ``keep`` newest key directories under ``root`` (never ``current``);
    errors are ignored (another process may be pruning or using them). Returns those removed."""
    others = [p for p in key_dirs(root) if p != current]
    removed = others[max(keep - (current is not None), 0):]  # ``current`` takes one of the places
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def _writable(path: Path) -> bool:
    probe = path / f".probe-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        os.close(fd)
        os.unlink(probe)
        return True
    except OSError:
        return False


def configure(env=None) -> Path | None:
    """Point numba's cache for this process (and its children) at ``cache_root()/source_key()``.

    Returns that directory, or None when it cannot be made or written: numba's default then stays
    (a ``NUMBA_CACHE_DIR`` that qdecode set in a parent process is put back to the user's value)
    and :data:`reason` says why. Never raises. ``env`` (default ``os.environ``) is for tests; only
    with ``os.environ`` does it set :data:`active` and ``numba.config.CACHE_DIR``."""
    global active, reason
    real = env is None or env is os.environ
    env = os.environ if env is None else env
    user = _user_numba_cache_dir(env)
    try:
        root = cache_root(env)
        path = root / source_key()
        fresh = not path.is_dir()
        path.mkdir(parents=True, exist_ok=True)
        if not _writable(path):
            raise OSError(f"cannot write in {path}")
        if fresh:
            prune(root, current=path)
        else:
            os.utime(path)  # most recently used
    except (OSError, ValueError, RuntimeError) as exc:
        path, why = None, f"{type(exc).__name__}: {exc}"
        for name in (_ENV_SET, _ENV_USER):
            env.pop(name, None)
        if user:
            env["NUMBA_CACHE_DIR"] = user
        else:
            env.pop("NUMBA_CACHE_DIR", None)
    else:
        why = ""
        env["NUMBA_CACHE_DIR"] = env[_ENV_SET] = str(path)
        env[_ENV_USER] = user
    if real:
        active, reason = path, why
        numba_config = sys.modules.get("numba.core.config")
        if numba_config is not None:
            numba_config.CACHE_DIR = env.get("NUMBA_CACHE_DIR", "")
    return path


def where() -> Path | None:
    """The directory numba caches qdecode's kernels in for this process, or None (numba's default)."""
    return active


def is_empty(path: Path | None = None) -> bool:
    """Whether the cache directory ``path`` (default: the active one) holds no compiled kernel yet (no numba
    index file ``*.nbi``): the next decoders to run compile their kernels first. False without a directory."""
    path = active if path is None else path
    if path is None:
        return False
    try:
        return not any(name.endswith(".nbi") for _, _, names in os.walk(path) for name in names)
    except OSError:
        return False


def clear(env=None) -> list[Path]:
    """Delete every key directory under :func:`cache_root`; returns them."""
    dirs = key_dirs(cache_root(env))
    for path in dirs:
        shutil.rmtree(path, ignore_errors=True)
    return dirs


def main(argv: list[str] | None = None) -> int:
    """``python -m qdecode.compile_cache [--where | --clear]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m qdecode.compile_cache",
                                     description="Where qdecode's numba cache lives; clear it.")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--where", action="store_true", help="print the active cache directory (default)")
    group.add_argument("--clear", action="store_true", help="delete every key directory under the cache root")
    args = parser.parse_args(argv)
    if args.clear:
        for path in clear():
            print(f"removed {path}")
        return 0
    if where() is None:
        print(f"numba's default (__pycache__ next to each source): {reason}")
        return 1
    print(where())
    return 0
