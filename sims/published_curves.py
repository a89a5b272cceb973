"""Published frame-error-rate points that classical plots draw beside our data.

Each :class:`PublishedCurve` is a peer's measured curve for one catalogue code, with the settings it was
measured at and where it was published. ``qdecode plot`` (:func:`qdecode.cli.plot.classical_references`) draws
the curves of the codes a CSV has rows for, as reference points (not as data: they were not sampled here).

AFF3CT v4.5's reference curves for the 5G NR LDPC codes (repository aff3ct/error_rate_references, directory
``LDPC/AWGN/BPSK/BP_HORIZONTAL_LAYERED/OMS``, files ``LDPC_N1024_K512_hlayered_OMS_i10_5G_inter.txt`` and
``LDPC_N12288_K6144_hlayered_OMS_i10_5G_inter.txt``): BPSK over AWGN, horizontal-layered offset min-sum with
offset 0.5, 10 iterations, no syndrome stop, float32 arithmetic, 5G NR base graphs with AFF3CT's 5G
puncturer, at least 100 frame errors per point (so each point has roughly a +-20 % 95 % interval). A frame error
is any wrong information bit.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["PublishedCurve", "PUBLISHED_CURVES", "published_curves_for"]


class PublishedCurve(NamedTuple):
    """One peer curve: frame error rate ``fer`` at Eb/N0 ``ebn0`` (dB) for catalogue code ``code``."""

    code: str
    label: str
    ebn0: tuple[float, ...]
    fer: tuple[float, ...]
    source: str


PUBLISHED_CURVES: tuple[PublishedCurve, ...] = (
    PublishedCurve(
        "nr5g[bg=2,k=512,n=1024]", "AFF3CT v4.5, HL-OMS 0.5, 10 it",
        (1.5, 1.75, 2.0, 2.25, 2.5, 2.75), (1.94e-1, 5.46e-2, 8.56e-3, 1.11e-3, 8.84e-5, 9.79e-6),
        "aff3ct/error_rate_references: LDPC/AWGN/BPSK/BP_HORIZONTAL_LAYERED/OMS/"
        "LDPC_N1024_K512_hlayered_OMS_i10_5G_inter.txt"),
    PublishedCurve(
        "nr5g[bg=1,k=6144,n=12288]", "AFF3CT v4.5, HL-OMS 0.5, 10 it",
        (1.2, 1.4, 1.5, 1.6, 1.7, 1.8), (6.38e-1, 5.63e-2, 7.96e-3, 3.78e-4, 1.85e-5, 1.24e-6),
        "aff3ct/error_rate_references: LDPC/AWGN/BPSK/BP_HORIZONTAL_LAYERED/OMS/"
        "LDPC_N12288_K6144_hlayered_OMS_i10_5G_inter.txt"),
)


def published_curves_for(code: str) -> list[PublishedCurve]:
    """The published curves of catalogue code ``code`` (its name as rows record it)."""
    return [c for c in PUBLISHED_CURVES if c.code == code]
