"""A decoder for a problem with herald detectors (:mod:`qdecode.heralds`), around any registry decoder.

The registry builds this wrapper whenever a problem carries :attr:`~qdecode.problem.DecodingProblem.heralds`;
its syndromes are the full DEM's (heralds included), as sinter and the sweep sample them. What it runs:

* ``aware`` mode and a decoder that takes per-shot priors (:attr:`Decoder.takes_shot_priors`: ``bp``,
  ``bposd``, ``uf``, ...): the decoder is built on ``Heralds.base_dem`` (the other detectors). Per shot the
  herald bits become per-shot priors (:func:`qdecode.kernels.herald_priors.shot_priors`), and the decoder decodes
  the other detectors with them (:meth:`Decoder.predict_observables_with_priors`). ``uses`` is ``"priors"``.
* ``aware`` mode and any other decoder, or ``checks``: the decoder decodes the full problem, the heralds
  as ordinary detectors (the BP family learns from them that way too, at more cost). ``uses`` is
  ``"checks"``.
* ``ignore``: the decoder is built on ``Heralds.blind_dem`` (the heralds marginalised out) and never sees
  the herald bits: the herald-blind reference. ``uses`` is ``"ignore"``.

It predicts observables only (``gives_errors`` False): its inner decoder's columns are not the full
problem's.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from qdecode.decoders.base import Decoder, DecoderCapabilityError, check_syndromes, unpacked_shots
from qdecode.heralds import herald_columns
from qdecode.kernels.herald_priors import shot_priors
from qdecode.problem import DecodingProblem


class HeraldedDecoder(Decoder):
    """``build(problem) -> Decoder`` run on the right form of a heralded ``problem`` (module docstring).

    Args:
        problem: a :class:`DecodingProblem` with ``heralds`` set (its ``H`` has the herald rows).
        build: the registry's factory for the inner decoder, with its parameters bound.
        takes_shot_priors: what the inner decoder's registry entry declares.

    Examples:
        >>> dem = '''error(0.01) D0
        ... error(0.01) D0 D1 L0
        ... error(0.001) D1 L0
        ... detector[herald] D0
        ... detector D1'''
        >>> prob = DecodingProblem.from_dem(dem)
        >>> from qdecode.decoders.registry import decoder
        >>> dec = decoder("bp", prob)
        >>> dec.uses, dec.inner.problem.num_detectors
        ('priors', 1)
        >>> dec.predict_observables_batch(np.array([[1, 1], [0, 1]], np.uint8)).ravel().tolist()  # the herald
        [1, 1]
    """

    gives_errors = False

    def __init__(self, problem: DecodingProblem, build: Callable[[DecodingProblem], Decoder], takes_shot_priors: bool):
        heralds = problem.heralds
        assert heralds is not None
        self.problem = problem
        self.heralds = heralds
        if heralds.mode == "ignore":
            self.uses = "ignore"
            self.inner = build(DecodingProblem.from_dem(heralds.blind_dem, heralds="checks"))
        else:
            inner = None
            if heralds.mode == "aware" and takes_shot_priors:
                base = DecodingProblem.from_dem(heralds.base_dem, heralds="checks")
                inner = build(base)
            if inner is not None and inner.takes_shot_priors:  # the instance may decline (a relay-bp ensemble)
                self.uses = "priors"
                self.inner = inner
                target = inner.prior_problem
                self.columns = herald_columns(heralds, target, components=target is not base)
                self.base_prior = np.ascontiguousarray(target.priors)
            else:
                self.uses = "checks"
                self.inner = build(problem.without_heralds())
        self.work_unit = self.inner.work_unit

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """uint8 ``(S, m)`` syndromes of the full problem (heralds included) -> uint8 ``(S, k)`` observables."""
        s = check_syndromes(syndromes, self.problem.num_detectors)
        if self.uses == "checks":
            out = self.inner.predict_observables_batch(s)
        else:
            kept = np.ascontiguousarray(s[:, self.heralds.kept])
            if self.uses == "ignore":
                out = self.inner.predict_observables_batch(kept)
            else:
                fired = np.ascontiguousarray(s[:, self.heralds.detectors])
                priors = shot_priors(self.base_prior, *self.columns, fired)
                out = self.inner.predict_observables_with_priors(kept, priors)
        self.last_info = self.inner.last_info
        return out

    def predict_observables_packed(self, packed: np.ndarray) -> np.ndarray:
        if self.uses == "checks":
            out = self.inner.predict_observables_packed(packed)
            self.last_info = self.inner.last_info
            return out
        obs = self.predict_observables_batch(unpacked_shots(packed, self.problem.num_detectors))
        return np.packbits(obs, axis=1, bitorder="little")

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        raise DecoderCapabilityError("a decoder of a problem with herald detectors predicts observables only: "
                                     "use predict_observables_batch")
