"""PyTorch's rounding of fp32 to bfloat16, for attnlite's bf16 tests (bf16_bits,
include/attnlite/ops/operands.h; a device's Precision::BF16 weights).

    /usr/bin/python3 tools/make_bf16_fixtures.py

Writes tests/fixtures/bf16_rounding.safetensors: in.x (F32, n) and out.bits (I32, n), the
16 bits of x.to(torch.bfloat16). The values: signed zeros, ties to even in both directions and
just past them, the largest bfloat16 and fp32 values past it (3.39e38 rounds back to it, the
largest fp32 to infinity), subnormals,
infinities (no NaN: PyTorch's vector and scalar paths give it different bits, and a model's
weights never hold one), then weights as a model holds them (normal, sd 0.05) and fp32 numbers of
every exponent (random finite bit patterns). Reproducible: torch.manual_seed(0).
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attnlite_tools import safetensors as st  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                   "bf16_rounding.safetensors")


def main():
    torch.manual_seed(0)
    f = np.float32
    edges = np.array([0.0, -0.0, 1.0, -1.0,
                      1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8), -(1 + 3 * 2 ** -8),
                      1 + 2 ** -8 + 2 ** -20, 1 + 2 ** -8 - 2 ** -20,
                      3.3895313892515355e38, 3.39e38, np.finfo(f).max, -np.finfo(f).max,
                      np.finfo(f).tiny, 1e-40, 1e-45, -1e-45,
                      np.inf, -np.inf], dtype=f)
    weights = (torch.randn(4096) * 0.05).numpy().astype(f)
    bits = torch.randint(0, 2 ** 31 - 1, (1024,), dtype=torch.int64).numpy().astype(np.uint32)
    bits = np.where(torch.rand(1024).numpy() < 0.5, bits, bits | np.uint32(0x80000000))
    anything = bits.view(f)
    anything = anything[np.isfinite(anything)]
    x = torch.from_numpy(np.concatenate([edges, weights, anything]).astype(f))
    out = x.to(torch.bfloat16).view(torch.int16).to(torch.int32) & 0xFFFF
    n = st.save(OUT, {"in.x": x, "out.bits": out},
                {"config": '{"what": "torch.Tensor.to(torch.bfloat16) bit patterns"}'})
    print(f"bf16_rounding.safetensors: {x.numel()} values, {n} bytes")


if __name__ == "__main__":
    main()
