"""The convolutional pre-decoder network (torch).

A fully convolutional 3D network: ``layers`` Conv3d layers of ``width`` channels (kernel
``kernel``, same padding, GELU), then a 1x1x1 head with one output channel per footprint
class (:mod:`qdecode.neural.predecoder_layout`). No normalisation and no dense layer, so one
set of weights applies to any volume ``(T, Y, X)``; the receptive field is
``1 + layers * (kernel - 1)`` voxels per axis.

Input float32 ``(S, 3, T, Y, X)``; output logits float32 ``(S, C, T, Y, X)``, already divided
by the calibrated temperature (a buffer, 1.0 until calibration), so ``sigmoid(logit)`` is the
calibrated probability that the class's mechanism anchored at that voxel fired.
"""

from __future__ import annotations

import dataclasses
import math

import torch
from torch import nn

from qdecode.neural.predecoder_layout import NUM_INPUT_CHANNELS


@dataclasses.dataclass(frozen=True)
class ModelArch:
    """Architecture hyper-parameters (stored in checkpoints)."""

    num_classes: int
    width: int = 32
    layers: int = 4
    kernel: int = 3
    in_channels: int = NUM_INPUT_CHANNELS

    @property
    def receptive_field(self) -> int:
        return 1 + self.layers * (self.kernel - 1)


class PredecoderNet(nn.Module):
    """Conv3d stack + 1x1x1 head; see the module docstring for shapes."""

    def __init__(self, arch: ModelArch, prior: float = 2e-3):
        super().__init__()
        self.arch = arch
        blocks: list[nn.Module] = []
        c_in = arch.in_channels
        for _ in range(arch.layers):
            blocks += [nn.Conv3d(c_in, arch.width, arch.kernel, padding=arch.kernel // 2), nn.GELU()]
            c_in = arch.width
        self.trunk = nn.Sequential(*blocks)
        self.head = nn.Conv3d(c_in, arch.num_classes, 1)
        nn.init.constant_(self.head.bias, math.log(prior / (1 - prior)))
        self.register_buffer("inv_temperature", torch.ones(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.trunk(x)) * self.inv_temperature

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
