"""MacKay .alist reader/writer: round trips, ldpc interop, and every error message."""

from __future__ import annotations

import io
import re
import types

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from qdecode.codes.alist import AlistFormatError, read_alist, write_alist

# (7,4) Hamming code, written by hand in MacKay's standard layout (zero padded).
HAMMING = np.array(
    [[1, 0, 1, 0, 1, 0, 1], [0, 1, 1, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1]], dtype=np.uint8
)
HAMMING_ALIST = """\
7 3
3 4
1 1 2 1 2 2 3
4 4 4
1 0 0
2 0 0
1 2 0
3 0 0
1 3 0
2 3 0
1 2 3
1 3 5 7
2 3 6 7
4 5 6 7
"""

# A small matrix with an empty row, an empty column and a column of weight 0.
SMALL = np.array([[1, 1, 0, 0], [0, 0, 0, 0], [0, 1, 1, 0]], dtype=np.uint8)
SMALL_ALIST = """\
4 3
2 2
1 2 1 0
2 0 2
1 0
1 3
3 0
0 0
1 2
0 0
2 3
"""


def _dense(M) -> np.ndarray:
    assert sp.issparse(M) and M.format == "csr" and M.dtype == np.uint8
    return M.toarray()


# --------------------------------------------------------------------- basics


def test_hamming_by_hand():
    H = read_alist(HAMMING_ALIST)
    assert H.shape == (3, 7)
    np.testing.assert_array_equal(_dense(H), HAMMING)
    assert write_alist(HAMMING) == HAMMING_ALIST
    np.testing.assert_array_equal(_dense(read_alist(HAMMING_ALIST, transpose=True)), HAMMING.T)


def test_small_with_empty_row_and_column():
    assert write_alist(SMALL) == SMALL_ALIST
    np.testing.assert_array_equal(_dense(read_alist(SMALL_ALIST)), SMALL)


def test_without_row_section():
    text = "\n".join(HAMMING_ALIST.splitlines()[: 4 + 7]) + "\n"
    np.testing.assert_array_equal(_dense(read_alist(text)), HAMMING)
    text = "\n".join(SMALL_ALIST.splitlines()[: 4 + 4])  # no final newline either
    np.testing.assert_array_equal(_dense(read_alist(text)), SMALL)


def test_whitespace_leniency():
    messy = "\n\n  7\t3  \r\n3 4\r\n\n1 1 2 1 2 2 3   \n4  4  4\n\n" + "\n".join(
        "\t" + ln + "  " for ln in HAMMING_ALIST.splitlines()[4:11]
    ) + "\n\n\n" + "\n".join(HAMMING_ALIST.splitlines()[11:]) + "\n\n  \n"
    np.testing.assert_array_equal(_dense(read_alist(messy)), HAMMING)


def test_weights_may_wrap_over_lines():
    lines = HAMMING_ALIST.splitlines()
    lines[2] = "1 1 2 1\n2 2 3"
    np.testing.assert_array_equal(_dense(read_alist("\n".join(lines))), HAMMING)


def test_unpadded_records_and_blank_empty_records():
    # ldpc-style: no zero padding, a weight-0 record is a blank line
    text = "4 3\n2 2\n1 2 1 0 \n2 0 2 \n1 \n1 3 \n3 \n\n1 2 \n\n2 3 \n"
    np.testing.assert_array_equal(_dense(read_alist(text)), SMALL)
    # trailing empty records may be cut off at end of file
    H = np.array([[1, 0], [0, 0]], dtype=np.uint8)
    np.testing.assert_array_equal(_dense(read_alist("2 2\n1 1\n1 0\n1 0\n1\n\n1")), H)


def test_sources(tmp_path):
    p = tmp_path / "h.alist"
    assert write_alist(HAMMING, p) == p.read_text()
    for src in (p, str(p), HAMMING_ALIST.encode(), io.StringIO(HAMMING_ALIST), io.BytesIO(HAMMING_ALIST.encode())):
        np.testing.assert_array_equal(_dense(read_alist(src)), HAMMING)
    with pytest.raises(TypeError, match="expects a path"):
        read_alist(42)


def test_write_accepts_sparse_and_checks_binary():
    S = sp.coo_matrix(HAMMING)
    assert write_alist(S) == HAMMING_ALIST
    assert write_alist(sp.csc_matrix(HAMMING.astype(bool))) == HAMMING_ALIST
    with_explicit_zero = sp.csr_matrix((np.array([1, 0]), (np.array([0, 1]), np.array([0, 1]))), shape=(2, 2))
    np.testing.assert_array_equal(_dense(read_alist(write_alist(with_explicit_zero))), [[1, 0], [0, 0]])
    with pytest.raises(ValueError, match="binary"):
        write_alist(np.array([[2, 0]]))
    dup = sp.coo_matrix((np.array([1, 1]), (np.array([0, 0]), np.array([0, 0]))), shape=(1, 1))
    with pytest.raises(ValueError, match="binary"):
        write_alist(dup)
    with pytest.raises(ValueError, match="2-D"):
        write_alist(np.zeros(3))


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 2)])
def test_empty_matrices(shape):
    H = np.zeros(shape, dtype=np.uint8)
    for transpose in (False, True):
        text = write_alist(H, transpose=transpose)
        assert _dense(read_alist(text, transpose=transpose)).shape == shape


# ----------------------------------------------------------------- round trip


@st.composite
def binary_matrices(draw):
    m = draw(st.integers(0, 9))
    n = draw(st.integers(0, 9))
    p = draw(st.sampled_from([0.0, 0.1, 0.3, 0.7, 1.0]))
    noise = draw(arrays(np.float64, (m, n), elements=st.floats(0, 1, exclude_max=True)))
    H = (noise < p).astype(np.uint8)
    if n and draw(st.booleans()):
        H[:, draw(st.integers(0, n - 1))] = 0  # force a weight-0 column
    if m and draw(st.booleans()):
        H[draw(st.integers(0, m - 1)), :] = 0  # force an empty row
    return H


def _mangle(text: str, data) -> str:
    """Random blank lines and whitespace (the reader must not care)."""
    out = []
    for ln in text.splitlines():
        for _ in range(data.draw(st.integers(0, 2))):
            out.append(data.draw(st.sampled_from(["", " ", "\t"])))
        sep = data.draw(st.sampled_from([" ", "  ", "\t"]))
        out.append(data.draw(st.sampled_from(["", " "])) + sep.join(ln.split())
                   + data.draw(st.sampled_from(["", " ", "\r"])))
    return "\n".join(out) + data.draw(st.sampled_from(["", "\n", "\n\n"]))


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(H=binary_matrices(), transpose=st.booleans(), data=st.data())
def test_round_trip_property(H, transpose, data):
    text = write_alist(H, transpose=transpose)
    m, n = H.shape
    file_cols = m if transpose else n
    assert text.splitlines()[0] == f"{file_cols} {n if transpose else m}"
    back = read_alist(text, transpose=transpose)
    np.testing.assert_array_equal(_dense(back), H)
    # writing sparse gives the same text; reading with the other convention gives H.T
    assert write_alist(sp.csr_matrix(H), transpose=transpose) == text
    np.testing.assert_array_equal(_dense(read_alist(text, transpose=not transpose)), H.T)
    # lenient whitespace / blank lines, and the optional row section
    np.testing.assert_array_equal(_dense(read_alist(_mangle(text, data), transpose=transpose)), H)
    no_rows = "\n".join(text.splitlines()[: 4 + file_cols]) + "\n"
    np.testing.assert_array_equal(_dense(read_alist(no_rows, transpose=transpose)), H)
    # unpadded (ldpc-style) records: zeros dropped, weight-0 records become blank lines
    lines = text.splitlines()
    unpadded = lines[:4] + [" ".join(t for t in ln.split() if t != "0") for ln in lines[4:]]
    np.testing.assert_array_equal(_dense(read_alist("\n".join(unpadded) + "\n", transpose=transpose)), H)


# ----------------------------------------------------------------------- ldpc


def _strip_padding(text: str) -> list[str]:
    lines = [ln.split() for ln in text.splitlines()]
    return [" ".join(t) for t in lines[:4]] + [" ".join(x for x in t if x != "0") for t in lines[4:]]


@pytest.mark.parametrize("seed", range(6))
def test_ldpc_save_alist_is_transposed(tmp_path, seed):
    """ldpc.alist.save_alist(name, H) writes the standard alist of H.T.

    Findings (ldpc 2.4.1): save_alist writes no zero padding (a weight-0 record
    is an empty line) and trailing spaces; it cannot write matrices with zero
    rows or columns (max() of an empty array). Read with transpose=True it gives
    H back; our write_alist(H, transpose=True) has the same content up to the
    padding. See test_ldpc_alist2numpy for the reader.
    """
    from ldpc import alist
    rng = np.random.default_rng(seed)
    m, n = rng.integers(1, 12, size=2)
    H = (rng.random((m, n)) < 0.3).astype(np.uint8)
    H[0, :] = 0 if seed % 2 else H[0, :]  # include an empty row sometimes
    if seed % 3 == 0:
        H[:, -1] = 0
    path = tmp_path / "ldpc.alist"
    alist.save_alist(str(path), H)
    np.testing.assert_array_equal(_dense(read_alist(path, transpose=True)), H)
    np.testing.assert_array_equal(_dense(read_alist(path)), H.T)
    assert _strip_padding(path.read_text()) == _strip_padding(write_alist(H, transpose=True))


def test_ldpc_alist2numpy(tmp_path, monkeypatch):
    """ldpc.alist.alist2numpy reads the transposed convention (first number =
    rows of H, first block = per-row column lists). Findings (ldpc 2.4.1):

    * it calls np.loadtxt(fname, delimiter="\\n", dtype=str), which numpy >= 2
      rejects with TypeError, so on numpy 2 it cannot read any file;
    * with a loadtxt that works (old numpy skipped blank lines), a 0 of zero
      padding becomes index -1 and sets the last column, and a blank (weight-0)
      record from ldpc's own save_alist is skipped so later rows shift up.

    So it only agrees with us on files without padding or empty records, which
    is what the second half checks, running ldpc's own parsing loop with a
    numpy-2-compatible loadtxt patched into its module.
    """
    from ldpc import alist
    # every row and column of H has the same weight -> no padding, no empty records
    H = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]], dtype=np.uint8)
    path = tmp_path / "ours.alist"
    write_alist(H, path, transpose=True)
    try:
        np.testing.assert_array_equal(alist.alist2numpy(str(path)), H)
        return
    except TypeError as exc:
        assert "delimiter" in str(exc)  # numpy >= 2

    def loadtxt(fname, delimiter=None, dtype=None):  # old numpy behaviour: blank lines skipped
        with open(fname) as f:
            return np.array([ln for ln in f.read().splitlines() if ln.strip()], dtype=str)

    monkeypatch.setattr(alist, "np", types.SimpleNamespace(loadtxt=loadtxt, zeros=np.zeros, array=np.array))
    np.testing.assert_array_equal(alist.alist2numpy(str(path)), H)
    np.testing.assert_array_equal(_dense(read_alist(path, transpose=True)), H)


# ---------------------------------------------------------------------- errors


def _lines(text: str) -> list[str]:
    return text.splitlines()


def _edit(text: str, lineno: int, new: str) -> str:
    ls = _lines(text)
    ls[lineno - 1] = new
    return "\n".join(ls) + "\n"


H = HAMMING_ALIST
ERRORS = [
    # (text, expected message regex)
    pytest.param(" \n\n", r"line 1: empty file, expected the header 'n m'", id="empty"),
    pytest.param(_edit(H, 1, "7 3 4"), r"line 1: non-binary alist \(q=4\) is not supported", id="non-binary"),
    pytest.param(_edit(H, 1, "7"), r"line 1: expected the header 'n m' \(2 integers: columns rows\), found 1 tokens",
                 id="header-count"),
    pytest.param(_edit(H, 1, "7 x"), r"line 1: expected a non-negative integer in the header 'n m', found 'x'",
                 id="header-int"),
    pytest.param(_edit(H, 2, "3 4 5"), r"line 2: expected 'dv_max dc_max' \(2 integers\), found 3 tokens",
                 id="line2-count"),
    pytest.param(_edit(H, 2, "3 -4"), r"line 2: expected a non-negative integer in 'dv_max dc_max', found '-4'",
                 id="negative"),
    pytest.param(_edit(H, 3, "1 1 2 1 2 2 3 1"), r"line 3: expected 7 column weights, found 8", id="col-weights-count"),
    pytest.param(_edit(H, 3, "1 1 2 1 2 2 3.0"),
                 r"line 3: expected a non-negative integer in column weights, found '3.0'", id="float"),
    pytest.param(_edit(H, 4, "4 4"),
                 r"line 5: expected 3 row weights, found 5 "
                 r"\(continued from line 4; a list of weights must end at a line end\)",
                 id="row-weights-short"),
    pytest.param("7 3\n3 4\n1 1 2 1 2 2 3\n4 4\n",
                 r"line 5: unexpected end of file, expected 3 row weights \(2 read so far\)", id="row-weights-eof"),
    pytest.param(_edit(H, 3, "1 1 2 1 2 2 4"), r"line 3: column 7 has weight 4, more than the number of rows m=3",
                 id="weight-gt-m"),
    pytest.param(_edit(_edit(H, 2, "2 4"), 3, "1 1 2 1 2 2 3"),
                 r"line 3: column 7 has weight 3, more than dv_max=2 \(line 2\)", id="weight-gt-dvmax"),
    pytest.param(_edit(H, 4, "4 4 8"), r"line 4: row 3 has weight 8, more than the number of columns n=7",
                 id="rweight-gt-n"),
    pytest.param(_edit(H, 4, "4 4 5"), r"line 4: row 3 has weight 5, more than dc_max=4 \(line 2\)",
                 id="rweight-gt-dcmax"),
    pytest.param(_edit(H, 4, "4 4 3"),
                 r"line 4: degree sums differ: column weights sum to 12 but row weights sum to 11", id="degree-sums"),
    pytest.param(_edit(H, 5, "1 2 0"), r"line 5: column 1 lists 2 row indices but its weight is 1", id="col-degree"),
    pytest.param(_edit(H, 7, "1 0 0"), r"line 7: column 3 lists 1 row indices but its weight is 2",
                 id="col-degree-short"),
    pytest.param(_edit(H, 7, "1 0 2"), r"line 7: column 3: zero padding must come after the row indices, found '1 0 2'",
                 id="zero-in-middle"),
    pytest.param(_edit(H, 7, "1 2 0 0"),
                 r"line 7: column 3 has 4 entries, more than the maximum weight 3 \(line 2\) allows", id="overpadded"),
    pytest.param(_edit(H, 7, "1 4 0"), r"line 7: column 3: row index 4 out of range 1..3", id="out-of-range"),
    pytest.param(_edit(H, 7, "2 2 0"), r"line 7: column 3: duplicate row index 2", id="duplicate"),
    pytest.param(_edit(H, 7, "1 y 0"),
                 r"line 7: expected a non-negative integer in the row indices of column 3, found 'y'", id="index-int"),
    pytest.param("\n".join(_lines(H)[:8]), r"line 9: unexpected end of file, expected the row indices of column 5",
                 id="truncated"),
    pytest.param(_edit(_edit(H, 7, "1 3 0"), 11, "1 2 3"),
                 r"line 4: row weights do not match the column section: "
                 r"row 2 has weight 4 listed but appears in 3 column records",
                 id="row-weights-vs-cols"),
    pytest.param(_edit(H, 12, "1 3 5 6"),
                 r"line 12: row section inconsistent with column section: "
                 r"row 1 lists column 6, but column 6 \(line 10\) does not list row 1",
                 id="rows-inconsistent"),
    pytest.param(_edit(H, 13, "2 3 6"), r"line 13: row 2 lists 3 column indices but its weight is 4", id="row-degree"),
    pytest.param(_edit(H, 14, "4 5 6 9"), r"line 14: row 3: column index 9 out of range 1..7", id="row-out-of-range"),
    pytest.param(_edit(H, 14, "4 5 5 7"), r"line 14: row 3: duplicate column index 5", id="row-duplicate"),
    pytest.param(H + "\n1 2 3\n",
                 r"line 16: unexpected trailing data '1 2 3' after the row section \(expected end of file\)",
                 id="trailing"),
    pytest.param(H + "garbage", r"line 15: unexpected trailing data 'garbage' after the row section",
                 id="trailing-garbage"),
    pytest.param("\n".join(_lines(H)[:12]) + "\n",
                 r"line 13: unexpected end of file, expected the column indices of row 2", id="partial-rows"),
]


@pytest.mark.parametrize("text, message", ERRORS)
def test_error_messages(text, message):
    with pytest.raises(AlistFormatError, match=message) as info:
        read_alist(text if "\n" in text else text + "\n")
    assert isinstance(info.value, ValueError)
    m = re.match(r"line (\d+):", str(info.value))
    assert m and info.value.line == int(m.group(1))


def test_error_messages_apply_to_transposed_reads():
    with pytest.raises(AlistFormatError, match=r"non-binary alist \(q=2\) is not supported"):
        read_alist("7 3 2\n3 4\n", transpose=True)
    with pytest.raises(AlistFormatError, match="duplicate row index 2"):
        read_alist(_edit(H, 7, "2 2 0"), transpose=True)
