"""The device of a PyTorch peer: full fp32 matmuls, and the wait that timing needs.

    from torch_device import fp32_device      # bench/ is on sys.path for a bench/ script
    dev, sync = fp32_device(a.device, "peer_torch_lm")
"""
import sys

import torch


def fp32_device(name, prog):
    """(torch.device(name), sync): TF32 off for matmuls and cuDNN (matmul precision "highest"
    where torch has it); exits with "PROG: --device cuda: no CUDA device" when name is cuda
    and torch sees no GPU; sync() waits for the GPU's queued work (a no-op on the CPU)."""
    if name == "cuda" and not torch.cuda.is_available():
        sys.exit(f"{prog}: --device cuda: no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision("highest")
    dev = torch.device(name)
    return dev, (torch.cuda.synchronize if dev.type == "cuda" else (lambda: None))
