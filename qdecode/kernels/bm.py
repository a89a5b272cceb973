"""Algebraic decoding of BCH and Reed-Solomon codes: syndromes, Berlekamp-Massey, Chien, Forney.

Field elements are ints in ``[0, 2^m)``; arithmetic uses the caller's tables ``exp`` (length
``2 (2^m - 1)``, ``exp[i] = alpha^i``) and ``log`` (``log[0]`` unused), ``nm = 2^m - 1``.
A received word of (possibly shortened) length ``ns`` stores the coefficient of
``x^(ns-1-a)`` at array index ``a`` (galois' order), so "position" ``p = ns - 1 - a`` is the
power of ``x`` and the error locator of position ``p`` is ``X = alpha^p``.

Decoder steps per word (narrow-sense: roots ``alpha^1 .. alpha^(2t)``, ``nsyn = 2t``):

1. Syndromes ``S_j = r(alpha^j)``, ``j = 1..nsyn``. Binary BCH: only odd ``j`` are summed
   (from a caller-built table ``synt[a, i] = alpha^((2i+1) p_a)``) and ``S_2j = S_j^2``.
   RS: Horner's rule. All zero and no erasures: the word is returned as is (0 errors).
2. RS erasures at positions ``Y_l`` (received symbols there are set to 0 first):
   ``Gamma(x) = prod_l (1 + Y_l x)`` and the modified syndromes
   ``S'(x) = Gamma(x) S(x) mod x^nsyn`` with ``S(x) = sum_{j<nsyn} S_{j+1} x^j``.
3. Berlekamp-Massey on ``S'_f .. S'_{nsyn-1}`` (``f`` = number of erasures; ``S' = S`` without
   erasures) gives the shortest LFSR ``(Lambda, L)``. For binary BCH the odd steps
   (discrepancy on an even-indexed syndrome) are skipped: their discrepancy is zero.
4. Failure if ``2L + f > nsyn`` (too many errors); the errata locator is
   ``Psi = Gamma Lambda``.
5. Chien search over the transmitted positions ``p = 0..ns-1``: ``Psi(alpha^-p) = 0``.
   Failure unless exactly ``L + f`` roots are found there (this also catches a degree
   below ``L``, repeated or non-field roots, and roots in shortened positions ``p >= ns``).
6. BCH: flip the bits at the roots. RS: Forney with first root ``alpha^1``:
   ``Omega = Psi S mod x^nsyn``, value ``E = Omega(X^-1) / Psi'(X^-1)``, added to the symbol.

Outputs per word: the corrected word (the input unchanged on failure, as galois returns
it) and ``nerr`` = number of errors corrected excluding erasures (``L``), ``-1`` on failure.

This is galois 0.4.11's decoder with one difference. galois' Berlekamp-Massey keeps only
as many locator coefficients as there are (modified) syndromes and judges the locator by
its degree rather than by ``L``; when the LFSR is longer than that (e.g. RS(16,8) with 7
erasures: one modified syndrome, ``L = 1``, stored locator ``1``) galois reports success and
returns a word that is not a codeword, where this decoder reports failure.

Kernels are ``@numba.njit(cache=True, nogil=True)`` over flat arrays; the ``*_range``
functions decode shots ``[start, stop)`` and allocate their scratch once per call, so
:func:`qdecode.kernels.threads.run_ranges` can split a batch over threads.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["bch_syndrome_table", "bch_decode_range", "rs_decode_range"]


def bch_syndrome_table(exp: np.ndarray, nm: int, t: int, ns: int) -> np.ndarray:
    """``synt`` int32 ``(ns, t)``: ``synt[a, i] = alpha^((2i+1)(ns-1-a) mod nm)``.

    Bit ``a`` of a binary word contributes ``synt[a, i]`` to the odd syndrome ``S_{2i+1}``.
    """
    p = (ns - 1 - np.arange(ns, dtype=np.int64))[:, None]
    j = (2 * np.arange(t, dtype=np.int64) + 1)[None, :]
    return np.ascontiguousarray(np.asarray(exp)[(j * p) % nm], dtype=np.int32)


@numba.njit(cache=True, nogil=True)
def _gmul(a, b, exp, log):
    if a == 0 or b == 0:
        return 0
    return exp[log[a] + log[b]]


@numba.njit(cache=True, nogil=True)
def _berlekamp_massey(syn, first, nsyn, binary, C, B, T, exp, log, nm, lmax):
    """Shortest LFSR of ``syn[first:nsyn]``; ``C`` receives the connection polynomial.

    ``C``, ``B``, ``T``: int32 scratch of length ``>= nsyn - first + 1``. Returns ``L``, or
    ``lmax + 1`` as soon as ``L`` exceeds ``lmax`` (``L`` never decreases, so the word is
    already a failure).
    """
    N = nsyn - first
    for i in range(N + 1):
        C[i] = 0
        B[i] = 0
    C[0] = 1
    B[0] = 1
    L = 0
    shift = 1
    b = 1
    for r in range(N):
        if binary and (r & 1) == 1:
            shift += 1
            continue
        d = syn[first + r]
        for i in range(1, L + 1):
            d ^= _gmul(C[i], syn[first + r - i], exp, log)
        if d == 0:
            shift += 1
            continue
        coef = log[d] - log[b]
        if coef < 0:
            coef += nm
        if 2 * L <= r:
            for i in range(N + 1):
                T[i] = C[i]
            for i in range(shift, N + 1):
                if B[i - shift] != 0:
                    C[i] ^= exp[coef + log[B[i - shift]]]
            L = r + 1 - L
            for i in range(N + 1):
                B[i] = T[i]
            b = d
            shift = 1
            if L > lmax:
                return lmax + 1
        else:
            for i in range(shift, N + 1):
                if B[i - shift] != 0:
                    C[i] ^= exp[coef + log[B[i - shift]]]
            shift += 1
    return L


@numba.njit(cache=True, nogil=True)
def _chien(poly, deg, ns, nm, lg, roots, exp, log):
    """Positions ``p`` in ``[0, ns)`` with ``poly(alpha^-p) = 0``, written to ``roots``; returns the count.

    ``lg``: int32 scratch ``>= deg + 1``. Stops after ``deg`` roots (there are no more).
    Term ``j`` at position ``p`` is ``poly_j alpha^(-j p)``: its log drops by ``j`` per step,
    so each position costs ``deg + 1`` table lookups.
    """
    for j in range(deg + 1):
        lg[j] = log[poly[j]] if poly[j] != 0 else -1
    count = 0
    if deg == 0:
        return 0
    for p in range(ns):
        acc = 0
        for j in range(deg + 1):
            if lg[j] >= 0:
                acc ^= exp[lg[j]]
        if acc == 0:
            roots[count] = p
            count += 1
            if count == deg:
                break
        for j in range(1, deg + 1):
            if lg[j] >= 0:
                v = lg[j] - j
                if v < 0:  # j <= deg < nm, one wrap suffices
                    v += nm
                lg[j] = v
    return count


@numba.njit(cache=True, nogil=True)
def _degree(poly, top):
    d = top
    while d > 0 and poly[d] == 0:
        d -= 1
    return d


@numba.njit(cache=True, nogil=True)
def bch_decode_range(words, synt, exp, log, nm, t, out, nerr, start, stop):
    """Binary BCH bounded-distance decoding of shots ``[start, stop)``.

    Args:
        words: uint8 ``(S, ns)`` received hard bits (index ``a`` = power ``ns-1-a``).
        synt: int32 ``(ns, t)`` from :func:`bch_syndrome_table`.
        exp, log: field tables; ``nm = 2^m - 1``.
        t: designed error-correcting capability (``2t`` consecutive roots from ``alpha^1``).
        out: uint8 ``(S, ns)`` corrected words (the input copied on failure).
        nerr: int32 ``(S,)`` bits corrected, or ``-1`` on decoding failure.
    """
    ns = words.shape[1]
    nsyn = 2 * t
    syn = np.zeros(nsyn, dtype=np.int32)
    C = np.zeros(nsyn + 1, dtype=np.int32)
    B = np.zeros(nsyn + 1, dtype=np.int32)
    T = np.zeros(nsyn + 1, dtype=np.int32)
    lg = np.zeros(nsyn + 1, dtype=np.int32)
    roots = np.zeros(nsyn + 1, dtype=np.int32)
    for s in range(start, stop):
        w = words[s]
        o = out[s]
        for a in range(ns):
            o[a] = w[a]
        for i in range(t):
            syn[2 * i] = 0
        for a in range(ns):
            if w[a] != 0:
                for i in range(t):
                    syn[2 * i] ^= synt[a, i]
        anynz = False
        for i in range(t):
            if syn[2 * i] != 0:
                anynz = True
        if not anynz:
            nerr[s] = 0
            continue
        for j in range(2, nsyn + 1, 2):  # S_j = S_{j/2}^2 (syn[j-1] holds S_j)
            h = syn[j // 2 - 1]
            syn[j - 1] = exp[2 * log[h]] if h != 0 else 0
        L = _berlekamp_massey(syn, 0, nsyn, True, C, B, T, exp, log, nm, t)
        if L > t:
            nerr[s] = -1
            continue
        deg = _degree(C, L)
        if deg != L:
            nerr[s] = -1
            continue
        count = _chien(C, deg, ns, nm, lg, roots, exp, log)
        if count != L:
            nerr[s] = -1
            continue
        for i in range(count):
            a = ns - 1 - roots[i]
            o[a] ^= 1
        nerr[s] = L


@numba.njit(cache=True, nogil=True)
def rs_decode_range(words, erasures, has_erasures, exp, log, nm, nsyn, out, nerr, start, stop):
    """Reed-Solomon errors-and-erasures decoding of shots ``[start, stop)``.

    Args:
        words: int32 ``(S, ns)`` received symbols in ``[0, 2^m)`` (index ``a`` = power ``ns-1-a``).
        erasures: uint8 ``(S, ns)`` 1 = erased (ignored unless ``has_erasures``; may then be ``(0, 0)``).
        exp, log: field tables; ``nm = 2^m - 1``.
        nsyn: ``n - k``, the number of consecutive roots ``alpha^1 .. alpha^nsyn``.
        out: int32 ``(S, ns)`` corrected words (the input copied on failure).
        nerr: int32 ``(S,)`` symbol errors corrected (erasures not counted), ``-1`` on failure
            (``2 errors + erasures > nsyn``, or the errata locator's roots do not check out).
    """
    # long: syndromes, Berlekamp-Massey, Chien search and Forney of a shot share the buffers above
    ns = words.shape[1]
    syn = np.zeros(nsyn, dtype=np.int32)
    mod = np.zeros(nsyn, dtype=np.int32)
    gam = np.zeros(nsyn + 1, dtype=np.int32)
    C = np.zeros(nsyn + 1, dtype=np.int32)
    B = np.zeros(nsyn + 1, dtype=np.int32)
    T = np.zeros(nsyn + 1, dtype=np.int32)
    psi = np.zeros(nsyn + 1, dtype=np.int32)
    omega = np.zeros(nsyn, dtype=np.int32)
    lg = np.zeros(nsyn + 1, dtype=np.int32)
    roots = np.zeros(nsyn + 1, dtype=np.int32)
    rw = np.zeros(ns, dtype=np.int32)
    for s in range(start, stop):
        w = words[s]
        o = out[s]
        for a in range(ns):
            o[a] = w[a]
            rw[a] = w[a]
        # Erasure locator Gamma(x) = prod (1 + alpha^p x); erased symbols read as 0.
        f = 0
        gam[0] = 1
        for i in range(1, nsyn + 1):
            gam[i] = 0
        fail = False
        if has_erasures:
            for a in range(ns):
                if erasures[s, a] != 0:
                    rw[a] = 0
                    f += 1
                    if f > nsyn:
                        fail = True
                        break
                    lp = ns - 1 - a  # log of the locator alpha^p
                    for i in range(f, 0, -1):
                        if gam[i - 1] != 0:
                            gam[i] ^= exp[log[gam[i - 1]] + lp]
        if fail:
            nerr[s] = -1
            continue
        # Syndromes S_j = r(alpha^j) by Horner (highest power first); syn[j-1] = S_j.
        anynz = False
        for j in range(1, nsyn + 1):
            acc = 0
            for a in range(ns):
                if acc != 0:
                    acc = exp[log[acc] + j]
                acc ^= rw[a]
            syn[j - 1] = acc
            if acc != 0:
                anynz = True
        if not anynz and f == 0:
            nerr[s] = 0
            continue
        # Modified syndromes S'(x) = Gamma(x) S(x) mod x^nsyn.
        for i in range(nsyn):
            acc = 0
            for j in range(min(i, f) + 1):
                acc ^= _gmul(gam[j], syn[i - j], exp, log)
            mod[i] = acc
        lmax = (nsyn - f) // 2
        L = _berlekamp_massey(mod, f, nsyn, False, C, B, T, exp, log, nm, lmax)
        if L > lmax:
            nerr[s] = -1
            continue
        # Errata locator Psi = Gamma * Lambda (degree <= f + L <= nsyn).
        top = f + L
        for i in range(top + 1):
            acc = 0
            for j in range(max(0, i - L), min(i, f) + 1):
                acc ^= _gmul(gam[j], C[i - j], exp, log)
            psi[i] = acc
        deg = _degree(psi, top)
        if deg != top:
            nerr[s] = -1
            continue
        count = _chien(psi, deg, ns, nm, lg, roots, exp, log)
        if count != top:
            nerr[s] = -1
            continue
        # Forney: Omega = Psi S mod x^nsyn; E = Omega(X^-1) / Psi'(X^-1), X = alpha^p.
        for i in range(nsyn):
            acc = 0
            for j in range(min(i, deg) + 1):
                acc ^= _gmul(psi[j], syn[i - j], exp, log)
            omega[i] = acc
        for r in range(count):
            p = roots[r]
            num = 0
            for i in range(nsyn):
                if omega[i] != 0:
                    num ^= exp[log[omega[i]] + (nm - (i * p) % nm)]
            den = 0
            for j in range(1, deg + 1, 2):  # formal derivative: odd terms, x^(j-1)
                if psi[j] != 0:
                    den ^= exp[log[psi[j]] + (nm - ((j - 1) * p) % nm)]
            if den == 0:  # cannot happen for distinct simple roots; fail safe
                fail = True
                break
            if num != 0:
                e = log[num] - log[den]
                if e < 0:
                    e += nm
                rw[ns - 1 - p] ^= exp[e]
        if fail:
            nerr[s] = -1
            continue
        for a in range(ns):
            o[a] = rw[a]
        nerr[s] = L
