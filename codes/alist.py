"""Read and write binary parity-check matrices in MacKay's ``.alist`` format.

The standard layout (http://www.inference.org.uk/mackay/codes/alist.html) for an
``m x n`` matrix ``H`` is::

    n m                  # columns (variable nodes), rows (checks)
    dv_max dc_max        # largest column weight, largest row weight
    dv_1 ... dv_n        # column weights
    dc_1 ... dc_m        # row weights
    <n lines>            # 1-based row indices of each column, zero-padded to dv_max
    <m lines>            # 1-based column indices of each row, zero-padded to dc_max

The row section is redundant; :func:`read_alist` accepts files without it and
cross-checks it when present.

**Convention pitfall.** ``ldpc.alist.save_alist(name, H)`` writes the standard
alist of ``H.T`` (its ``alist2numpy`` reads the first number as the row count).
Pass ``transpose=True`` to read such files as ``H``, or to write files in that
convention.

>>> import numpy as np
>>> H = np.array([[1, 1, 0], [0, 1, 1]], dtype=np.uint8)
>>> text = write_alist(H)
>>> print(text, end="")
3 2
2 2
1 2 1
2 2
1 0
1 2
2 0
1 2
2 3
>>> bool((read_alist(text).toarray() == H).all())
True
>>> bool((read_alist(write_alist(H, transpose=True), transpose=True).toarray() == H).all())
True
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import IO, Union

import numpy as np
import scipy.sparse as sp

from qdecode.errors import InputError

__all__ = ["AlistFormatError", "read_alist", "write_alist"]

_INT = re.compile(r"[0-9]+\Z")


class AlistFormatError(InputError):
    """An ``.alist`` file is malformed. ``line`` is the 1-based line number, or None."""

    def __init__(self, message: str, line: int | None = None):
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


def _show(s: str, limit: int = 60) -> str:
    return repr(s if len(s) <= limit else s[:limit] + "...")


class _Lines:
    """Cursor over the physical lines of a file, with 1-based line numbers."""

    def __init__(self, text: str):
        if text.startswith("\ufeff"):
            text = text[1:]
        self.lines = text.splitlines()
        self.pos = 0  # index of the next unread line

    @property
    def lineno(self) -> int:  # 1-based number of the next unread line
        return self.pos + 1

    def at_eof(self) -> bool:
        return self.pos >= len(self.lines)

    def peek_blank(self) -> bool:
        return not self.at_eof() and not self.lines[self.pos].strip()

    def skip_blank(self) -> None:
        while self.peek_blank():
            self.pos += 1

    def rest_is_blank(self) -> bool:
        return all(not ln.strip() for ln in self.lines[self.pos:])

    def next_nonblank(self, what: str) -> tuple[int, list[str]]:
        self.skip_blank()
        if self.at_eof():
            raise AlistFormatError(f"unexpected end of file, expected {what}", self.lineno)
        self.pos += 1
        return self.pos, self.lines[self.pos - 1].split()

    def peek_nonblank_tokens(self) -> list[str] | None:
        i = self.pos
        while i < len(self.lines) and not self.lines[i].strip():
            i += 1
        return self.lines[i].split() if i < len(self.lines) else None


def _ints(tokens: list[str], lineno: int, what: str) -> list[int]:
    out = []
    for t in tokens:
        if not _INT.match(t):
            raise AlistFormatError(f"expected a non-negative integer in {what}, found {_show(t)}", lineno)
        out.append(int(t))
    return out


def _read_counts(cur: _Lines, count: int, what: str) -> tuple[int, list[int]]:
    """Read ``count`` integers starting on the next non-blank line; they may wrap
    over several lines but must end at a line end. Returns (first line, values)."""
    if count == 0:
        return cur.lineno, []
    values: list[int] = []
    first = None
    while len(values) < count:
        lineno, toks = cur.next_nonblank(f"{count} {what} ({len(values)} read so far)")
        first = first or lineno
        values += _ints(toks, lineno, what)
        if len(values) > count:
            where = ("" if lineno == first
                     else f" (continued from line {first}; a list of weights must end at a line end)")
            raise AlistFormatError(f"expected {count} {what}, found {len(values)}{where}", lineno)
    return first, values


def _read_section(
    cur: _Lines, weights: list[int], dmax: int, dline: int, size: int, kind: str, other: str
) -> tuple[list[np.ndarray], list[int]]:
    """Read one index section: ``len(weights)`` records of 1-based ``other`` indices.

    A record is its indices followed by optional zero padding (at most ``dmax``
    tokens in all). A weight-0 record may be a line of zeros, or a blank line /
    end of file (unpadded writers such as ldpc). Returns (indices per record as
    0-based arrays, line number of each record).
    """
    records: list[np.ndarray] = []
    linenos: list[int] = []
    for j, w in enumerate(weights):
        label = f"{kind} {j + 1}"
        if w == 0:
            nxt = cur.peek_nonblank_tokens()
            if cur.at_eof():
                records.append(np.empty(0, np.int64))
                linenos.append(cur.lineno)
                continue
            if cur.peek_blank() and not (nxt and all(t == "0" for t in nxt)):
                # unpadded empty record
                linenos.append(cur.lineno)
                cur.pos += 1
                records.append(np.empty(0, np.int64))
                continue
        lineno, toks = cur.next_nonblank(f"the {other} indices of {label}")
        vals = _ints(toks, lineno, f"the {other} indices of {label}")
        nz = 0
        while nz < len(vals) and vals[nz] != 0:
            nz += 1
        if any(v != 0 for v in vals[nz:]):
            raise AlistFormatError(
                f"{label}: zero padding must come after the {other} indices, found {' '.join(toks)!r}", lineno
            )
        if nz != w:
            raise AlistFormatError(f"{label} lists {nz} {other} indices but its weight is {w}", lineno)
        if len(vals) > max(dmax, w):
            raise AlistFormatError(
                f"{label} has {len(vals)} entries, more than the maximum weight {dmax} (line {dline}) allows", lineno
            )
        idx = np.asarray(vals[:nz], dtype=np.int64)
        bad = idx[idx > size]
        if bad.size:
            raise AlistFormatError(f"{label}: {other} index {int(bad[0])} out of range 1..{size}", lineno)
        uniq, counts = np.unique(idx, return_counts=True)
        if (counts > 1).any():
            raise AlistFormatError(f"{label}: duplicate {other} index {int(uniq[counts > 1][0])}", lineno)
        records.append(idx - 1)
        linenos.append(lineno)
    return records, linenos


def _load_text(path_or_text) -> str:
    if hasattr(path_or_text, "read"):
        data = path_or_text.read()
        return data.decode("utf-8") if isinstance(data, bytes) else data
    if isinstance(path_or_text, bytes):
        return path_or_text.decode("utf-8")
    if isinstance(path_or_text, os.PathLike):
        return Path(path_or_text).read_text(encoding="utf-8")
    if isinstance(path_or_text, str):
        if not path_or_text or "\n" in path_or_text or "\r" in path_or_text:
            return path_or_text
        return Path(path_or_text).read_text(encoding="utf-8")
    raise TypeError(f"read_alist expects a path, alist text or file object, got {type(path_or_text).__name__}")


def read_alist(path_or_text: Union[str, os.PathLike, bytes, IO], *, transpose: bool = False) -> sp.csr_matrix:
    """Parse an ``.alist`` file into an ``(m, n)`` ``uint8`` CSR matrix.

    ``path_or_text`` is a path (``str`` without a newline or ``os.PathLike``),
    the alist text itself (a ``str`` containing a newline, or ``bytes``) or an
    open file object. With ``transpose=True`` the file is taken to hold ``H.T``
    (ldpc's ``save_alist`` convention) and ``H`` is returned; error messages
    still use the file's own "row"/"column" terms.

    Blank lines, tabs, trailing spaces and CRLF line ends are accepted, as are
    files without the (redundant) row section and records without zero padding.
    Anything else raises :class:`AlistFormatError` naming the line: non-integer
    tokens, wrong counts, an index list that does not match its weight, indices
    out of range or repeated, unequal degree sums, a row section that disagrees
    with the column section, trailing data, and non-binary (``n m q``) headers.
    """
    cur = _Lines(_load_text(path_or_text))
    if cur.rest_is_blank():
        raise AlistFormatError("empty file, expected the header 'n m' (columns rows)", 1)

    lineno, toks = cur.next_nonblank("the header 'n m' (columns rows)")
    if len(toks) == 3:
        q = toks[2]
        raise AlistFormatError(f"non-binary alist (q={q}) is not supported; expected the header 'n m'", lineno)
    if len(toks) != 2:
        raise AlistFormatError(f"expected the header 'n m' (2 integers: columns rows), found {len(toks)} tokens",
                               lineno)
    n, m = _ints(toks, lineno, "the header 'n m'")

    dline, toks = cur.next_nonblank("'dv_max dc_max' (maximum column and row weights)")
    lineno = dline
    if len(toks) != 2:
        raise AlistFormatError(f"expected 'dv_max dc_max' (2 integers), found {len(toks)} tokens", lineno)
    dv_max, dc_max = _ints(toks, lineno, "'dv_max dc_max'")

    col_line, col_w = _read_counts(cur, n, "column weights")
    row_line, row_w = _read_counts(cur, m, "row weights")
    for j, w in enumerate(col_w):
        if w > m:
            raise AlistFormatError(f"column {j + 1} has weight {w}, more than the number of rows m={m}", col_line)
        if w > dv_max:
            raise AlistFormatError(f"column {j + 1} has weight {w}, more than dv_max={dv_max} (line {dline})", col_line)
    for i, w in enumerate(row_w):
        if w > n:
            raise AlistFormatError(f"row {i + 1} has weight {w}, more than the number of columns n={n}", row_line)
        if w > dc_max:
            raise AlistFormatError(f"row {i + 1} has weight {w}, more than dc_max={dc_max} (line {dline})", row_line)
    if sum(col_w) != sum(row_w):
        raise AlistFormatError(
            f"degree sums differ: column weights sum to {sum(col_w)} but row weights sum to {sum(row_w)}", row_line
        )

    cols, col_lines = _read_section(cur, col_w, dv_max, dline, m, "column", "row")
    nnz = sum(col_w)
    rows_idx = np.concatenate(cols) if cols else np.empty(0, np.int64)
    cols_idx = np.repeat(np.arange(n, dtype=np.int64), col_w)

    # the row weights (line 4) must agree with the column section
    deg = np.bincount(rows_idx, minlength=m) if m else np.empty(0, np.int64)
    mismatch = np.flatnonzero(deg != np.asarray(row_w, dtype=np.int64))
    if mismatch.size:
        i = int(mismatch[0])
        raise AlistFormatError(
            f"row weights do not match the column section: row {i + 1} has weight {row_w[i]} listed "
            f"but appears in {int(deg[i])} column records",
            row_line,
        )

    if not cur.rest_is_blank():
        rows, row_lines = _read_section(cur, row_w, dc_max, dline, n, "row", "column")
        by_col = [set(c.tolist()) for c in cols]
        for i, r in enumerate(rows):
            for c in r.tolist():
                if i not in by_col[c]:
                    raise AlistFormatError(
                        f"row section inconsistent with column section: row {i + 1} lists column {c + 1}, "
                        f"but column {c + 1} (line {col_lines[c]}) does not list row {i + 1}",
                        row_lines[i],
                    )
        # equal weights + one-way inclusion imply equality; nothing else to check
        if not cur.rest_is_blank():
            cur.skip_blank()
            raise AlistFormatError(
                f"unexpected trailing data {_show(cur.lines[cur.pos].strip())} after the row section "
                f"(expected end of file)",
                cur.lineno,
            )

    H = sp.csr_matrix(
        (np.ones(nnz, dtype=np.uint8), (rows_idx, cols_idx)), shape=(m, n), dtype=np.uint8
    )
    H.sort_indices()
    return H.T.tocsr() if transpose else H


def _as_binary_csc(H) -> sp.csc_matrix:
    if sp.issparse(H):
        M = sp.csc_matrix(H, copy=True)
        M.sum_duplicates()
        M.eliminate_zeros()
        if M.data.size and not np.all(M.data == 1):
            raise InputError("write_alist: H must be binary (entries 0 or 1)")
    else:
        A = np.asarray(H)
        if A.ndim != 2:
            raise InputError(f"write_alist: H must be 2-D, got shape {A.shape}")
        if not np.isin(A, (0, 1)).all():
            raise InputError("write_alist: H must be binary (entries 0 or 1)")
        M = sp.csc_matrix(A.astype(np.uint8))
        M.eliminate_zeros()
    M.data = np.ones_like(M.data, dtype=np.uint8)
    M.sort_indices()
    return M


def _records(indptr: np.ndarray, indices: np.ndarray, count: int, pad: int) -> list[str]:
    lines = []
    for j in range(count):
        idx = (indices[indptr[j] : indptr[j + 1]] + 1).tolist()
        idx += [0] * (pad - len(idx))
        lines.append(" ".join(map(str, idx)))
    return lines


def write_alist(H, path: Union[str, os.PathLike, None] = None, *, transpose: bool = False) -> str:
    """Write binary ``H`` (dense array-like or scipy sparse) in the standard alist format.

    Both index sections are written, zero-padded to ``dv_max`` / ``dc_max``.
    With ``transpose=True`` the file holds ``H.T`` (ldpc's ``save_alist``
    convention; read it back with ``read_alist(..., transpose=True)``). Returns
    the text, and also writes it to ``path`` when given.
    """
    M = _as_binary_csc(H)
    if transpose:
        M = M.T.tocsc()
        M.sort_indices()
    m, n = M.shape
    R = M.tocsr()
    R.sort_indices()
    col_w = np.diff(M.indptr)
    row_w = np.diff(R.indptr)
    dv_max = int(col_w.max()) if n else 0
    dc_max = int(row_w.max()) if m else 0
    lines = [
        f"{n} {m}",
        f"{dv_max} {dc_max}",
        " ".join(map(str, col_w.tolist())),
        " ".join(map(str, row_w.tolist())),
        *_records(M.indptr, M.indices, n, dv_max),
        *_records(R.indptr, R.indices, m, dc_max),
    ]
    text = "\n".join(lines) + "\n"
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text
