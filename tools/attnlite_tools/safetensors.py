"""Minimal safetensors reader/writer (no third-party package needed).

File layout:
    u64 little-endian N          length of the JSON header in bytes
    N bytes of UTF-8 JSON        {"__metadata__": {str: str},
                                  name: {"dtype": "F32", "shape": [...],
                                         "data_offsets": [begin, end]}, ...}
                                 padded with spaces so that 8 + N is a multiple of 8
    raw little-endian bytes      tensors packed back to back in header order;
                                 offsets are relative to the start of this block

Tensors may be given as torch tensors or NumPy arrays; `load` returns torch tensors
(or NumPy arrays with as_numpy=True) in file order, plus the metadata dict.

    /usr/bin/python3 tools/safetensors_io.py            # self-test
    /usr/bin/python3 tools/safetensors_io.py FILE...    # print metadata, names, dtypes, shapes
"""
import json
import struct
from collections import OrderedDict

import numpy as np

# safetensors dtype name <-> little-endian NumPy dtype
_DTYPES = OrderedDict([
    ("F64", np.dtype("<f8")),
    ("F32", np.dtype("<f4")),
    ("F16", np.dtype("<f2")),
    ("I64", np.dtype("<i8")),
    ("I32", np.dtype("<i4")),
    ("I16", np.dtype("<i2")),
    ("I8", np.dtype("i1")),
    ("U8", np.dtype("u1")),
    ("BOOL", np.dtype("?")),
])
_NP_TO_NAME = {v: k for k, v in _DTYPES.items()}


def _to_numpy(t):
    try:
        import torch
        if isinstance(t, torch.Tensor):
            t = t.detach().cpu().contiguous().numpy()
    except ImportError:  # pragma: no cover - torch is optional for reading
        pass
    a = np.asarray(t)
    name = _NP_TO_NAME.get(a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype)
    if name is None:
        raise TypeError(f"unsupported dtype {a.dtype}")
    return np.ascontiguousarray(a, dtype=_DTYPES[name]), name


def dumps(tensors, metadata=None):
    """Serialise an ordered mapping name -> tensor into safetensors bytes."""
    header = OrderedDict()
    if metadata:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError("__metadata__ keys and values must be strings")
        header["__metadata__"] = OrderedDict(metadata)
    blobs = []
    offset = 0
    for name, t in tensors.items():
        if name == "__metadata__":
            raise ValueError("'__metadata__' is reserved")
        a, dtype = _to_numpy(t)
        raw = a.tobytes(order="C")
        header[name] = OrderedDict([
            ("dtype", dtype),
            ("shape", [int(s) for s in a.shape]),
            ("data_offsets", [offset, offset + len(raw)]),
        ])
        blobs.append(raw)
        offset += len(raw)
    hjson = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    pad = (-(8 + len(hjson))) % 8
    hjson += b" " * pad
    return struct.pack("<Q", len(hjson)) + hjson + b"".join(blobs)


def save(path, tensors, metadata=None):
    data = dumps(tensors, metadata)
    with open(path, "wb") as f:
        f.write(data)
    return len(data)


def loads(data, as_numpy=False):
    """Parse safetensors bytes -> (OrderedDict name -> tensor, metadata dict)."""
    if len(data) < 8:
        raise ValueError("file too short")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise ValueError("header length exceeds file size")
    header = json.loads(data[8:8 + n].decode("utf-8"), object_pairs_hook=OrderedDict)
    metadata = dict(header.pop("__metadata__", {}) or {})
    body = memoryview(data)[8 + n:]
    out = OrderedDict()
    for name, info in header.items():
        dt = _DTYPES[info["dtype"]]
        shape = tuple(info["shape"])
        b, e = info["data_offsets"]
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if not (0 <= b <= e <= len(body)) or e - b != count * dt.itemsize:
            raise ValueError(f"bad data_offsets for {name}")
        a = np.frombuffer(body[b:e], dtype=dt).reshape(shape).copy()
        if as_numpy:
            out[name] = a
        else:
            import torch
            out[name] = torch.from_numpy(a.astype(a.dtype.newbyteorder("=")))
    return out, metadata


def load(path, as_numpy=False):
    with open(path, "rb") as f:
        return loads(f.read(), as_numpy=as_numpy)


def main():
    """Self-test without arguments; with files, print their metadata and tensors."""
    import sys
    if len(sys.argv) == 1:
        import torch
        t = OrderedDict(a=torch.arange(6, dtype=torch.float32).reshape(2, 3),
                        b=torch.tensor([1, -2], dtype=torch.int64),
                        c=torch.tensor([3], dtype=torch.int32),
                        d=torch.tensor([-1, 7], dtype=torch.int8))
        raw = dumps(t, {"k": "v"})
        assert (8 + struct.unpack("<Q", raw[:8])[0]) % 8 == 0
        back, meta = loads(raw)
        assert meta == {"k": "v"} and list(back) == list(t)
        for k in t:
            assert back[k].dtype == t[k].dtype and torch.equal(back[k], t[k])
        print("ok")
    for p in sys.argv[1:]:
        ts, meta = load(p, as_numpy=True)
        print(p)
        for k, v in meta.items():
            print(f"  meta {k}: {v[:100]}")
        for k, v in ts.items():
            print(f"  {k:50s} {_NP_TO_NAME[v.dtype]:4s} {list(v.shape)}")
