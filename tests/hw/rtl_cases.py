"""What the RTL tests share: the simulator check, the corner-case check matrix and the fixed-point decoder
whose arithmetic the generated Verilog reproduces."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import scipy.sparse as sp

from qdecode.decoders.bp import BpDecoder
from qdecode.problem import DecodingProblem

needs_iverilog = pytest.mark.skipif(shutil.which("iverilog") is None or shutil.which("vvp") is None,
                                    reason="iverilog not installed: make rtl-tools")

# A small matrix with every corner case a top must handle: an empty row, a degree-1 row,
# a column without checks, degrees 1..3 on both sides.
H_EDGE = np.array([
    [1, 1, 0, 0, 0, 0],
    [0, 1, 1, 1, 0, 0],
    [0, 0, 0, 0, 0, 0],
    [0, 0, 0, 1, 0, 0],
    [1, 0, 1, 1, 1, 0],
], dtype=np.uint8)


def minsum_decoder(H, p=0.05, **kw):
    """8-bit (3 fraction bits) flooding min-sum ``BpDecoder`` of check matrix ``H``, 20 iterations, alpha 0.625;
    ``kw`` overrides any of these."""
    opts = dict(method="minsum", max_iter=20, alpha=0.625, beta=0.0, schedule="flooding", bits=8, frac_bits=3)
    opts.update(kw)
    return BpDecoder(DecodingProblem.from_check_matrix(sp.csr_matrix(H), p), **opts)
