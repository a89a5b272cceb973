"""The statistical checks of the test suite: failure counts against a claimed rate or rate ratio.

Every test that compares Monte-Carlo failure counts with a claim goes through these helpers, so each
such check states its claim (a rate, or a ratio to a reference decoder), its confidence and, for a
ratio, the ratio it must be able to detect on its own sample:

* :func:`assert_ratio_at_most` -- "``fails / shots`` is at most ``ratio`` times ``ref_fails /
  ref_shots``" must not be rejected at :data:`CONFIDENCE`; with ``detects`` given, the sample must be
  large enough that a decoder failing ``detects`` times as often as the reference would be rejected
  (so a larger failure count cannot pass for want of shots).
* :func:`assert_ratio_above` / :func:`assert_ratio_below` -- the data show ``fails / shots`` above
  (below) ``ratio * ref_fails / ref_shots`` at :data:`CONFIDENCE` (a degradation or an improvement
  the test claims is real).
* :func:`assert_rate_at_most` / :func:`assert_rate_above` -- the same for one binomial rate against a
  fixed value (exact one-sided binomial tests).

The ratio test is the conditional (exact) test of two Poisson rates: given the total ``n = fails +
ref_fails``, ``fails`` is Binomial(``n``, ``pi``) with ``pi = r s / (r s + s_ref)`` for rate ratio ``r``
and shot counts ``s``, ``s_ref``; ``r <= ratio`` is rejected when the one-sided binomial p-value is
below ``1 - confidence``. For rates that are not small it is conservative (a binomial count varies
less than a Poisson one), and so it is when both counts come from the same shots (failures of two
decoders on the same shots are positively correlated). Every test fixes its seeds, so a check passes
or fails the same way on every run; the confidence says how strong the evidence against a claim must
be before the test fails.
"""

from __future__ import annotations

from scipy.stats import binomtest

#: The confidence of every check unless a test states another: 99.9 % (one-sided).
CONFIDENCE = 0.999


def _ratio_p_value(fails: int, shots: int, ref_fails: int, ref_shots: int, ratio: float,
                   alternative: str = "greater") -> float:
    """One-sided p-value (conditional binomial test) of ``rate <= ratio * ref_rate`` (``alternative`` "greater")
    or of ``rate >= ratio * ref_rate`` ("less"); 1.0 without failures."""
    n = fails + ref_fails
    if n == 0:
        return 1.0
    pi = ratio * shots / (ratio * shots + ref_shots)
    return float(binomtest(fails, n, pi, alternative=alternative).pvalue)


def _describe(what: str, fails: int, shots: int, ref_fails: int, ref_shots: int) -> str:
    return f"{what}: {fails}/{shots} failures against the reference's {ref_fails}/{ref_shots}"


def assert_ratio_at_most(fails: int, shots: int, ref_fails: int, ref_shots: int, ratio: float, *,
                         detects: float | None = None, confidence: float = CONFIDENCE, what: str = "") -> None:
    """Fail unless the counts are consistent (at ``confidence``) with a rate at most ``ratio`` times the reference's.

    Args:
        fails, shots: the failures and shots of the decoder under test.
        ref_fails, ref_shots: the same for the reference (often the same shots).
        ratio: the claimed bound on the ratio of the two failure rates.
        detects: when given (> ``ratio``), also fail if the sample is too small to reject a decoder that
            failed ``detects`` times as often as the reference did here: the power the check claims.
        confidence: one-sided confidence of the test.
        what: a label for the messages.
    """
    alpha = 1 - confidence
    p = _ratio_p_value(fails, shots, ref_fails, ref_shots, ratio)
    assert p >= alpha, (f"{_describe(what, fails, shots, ref_fails, ref_shots)}: a rate ratio <= {ratio} is "
                        f"rejected at {confidence:.1%} (p = {p:.2g})")
    if detects is not None:
        assert detects > ratio
        worse = round(detects * ref_fails * shots / ref_shots)
        p_worse = _ratio_p_value(worse, shots, ref_fails, ref_shots, ratio)
        assert p_worse < alpha, (f"{_describe(what, fails, shots, ref_fails, ref_shots)}: too few failures to tell "
                                 f"a ratio of {detects} from {ratio} at {confidence:.1%} ({worse} failures would "
                                 f"give p = {p_worse:.2g}): raise the shots")


def assert_ratio_above(fails: int, shots: int, ref_fails: int, ref_shots: int, ratio: float, *,
                       confidence: float = CONFIDENCE, what: str = "") -> None:
    """Fail unless the counts show (at ``confidence``) a rate above ``ratio`` times the reference's."""
    p = _ratio_p_value(fails, shots, ref_fails, ref_shots, ratio)
    assert p < 1 - confidence, (f"{_describe(what, fails, shots, ref_fails, ref_shots)}: a rate ratio above "
                                f"{ratio} is not shown at {confidence:.1%} (p = {p:.2g})")


def assert_ratio_below(fails: int, shots: int, ref_fails: int, ref_shots: int, ratio: float, *,
                       confidence: float = CONFIDENCE, what: str = "") -> None:
    """Fail unless the counts show (at ``confidence``) a rate below ``ratio`` times the reference's."""
    p = _ratio_p_value(fails, shots, ref_fails, ref_shots, ratio, alternative="less")
    assert p < 1 - confidence, (f"{_describe(what, fails, shots, ref_fails, ref_shots)}: a rate ratio below "
                                f"{ratio} is not shown at {confidence:.1%} (p = {p:.2g})")


def assert_rate_at_most(fails: int, shots: int, rate: float, *, confidence: float = CONFIDENCE,
                        what: str = "") -> None:
    """Fail unless ``fails`` in ``shots`` is consistent (at ``confidence``) with a failure rate at most ``rate``."""
    p = float(binomtest(fails, shots, rate, alternative="greater").pvalue)
    assert p >= 1 - confidence, (f"{what}: {fails}/{shots} failures: a rate <= {rate:g} is rejected at "
                                 f"{confidence:.1%} (p = {p:.2g})")


def assert_rate_above(fails: int, shots: int, rate: float, *, confidence: float = CONFIDENCE,
                      what: str = "") -> None:
    """Fail unless ``fails`` in ``shots`` shows (at ``confidence``) a failure rate above ``rate``."""
    p = float(binomtest(fails, shots, rate, alternative="greater").pvalue)
    assert p < 1 - confidence, (f"{what}: {fails}/{shots} failures do not show a rate above {rate:g} at "
                                f"{confidence:.1%} (p = {p:.2g})")
