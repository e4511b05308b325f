"""attnlite.Classifier: which digit an image shows, with the Vision Transformer."""

from __future__ import annotations

import ctypes
import os
from typing import TYPE_CHECKING, List, Optional, Sequence, Union, overload

from . import _capi
from ._capi import Error, decode, item_reason
from .model import Model

if TYPE_CHECKING:
    import numpy

__all__ = ["Classifier", "Classification", "digit_from_image"]

Image = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, "numpy.ndarray"]


def _file_bytes_to_digit(data) -> "numpy.ndarray":
    import numpy as np

    mv = memoryview(data)
    n = mv.nbytes
    buf = (ctypes.c_uint8 * n).from_buffer_copy(mv) if n else None
    out = np.zeros(64, dtype=np.float32)
    err = ctypes.c_void_p()
    st = _capi.lib().al_digit_from_file_bytes(buf, n, out.ctypes.data_as(_capi._fptr), ctypes.byref(err))
    if st != _capi.AL_OK:
        raise _capi.take_error(err, "cannot read the image", st)
    return out.reshape(8, 8)


def _rgba_to_digit(a) -> "numpy.ndarray":
    import numpy as np

    a = np.ascontiguousarray(a, dtype=np.uint8)
    h, w = int(a.shape[0]), int(a.shape[1])
    out = np.zeros(64, dtype=np.float32)
    err = ctypes.c_void_p()
    st = _capi.lib().al_digit_from_rgba(a.ctypes.data_as(_capi._u8ptr), w, h,
                                       out.ctypes.data_as(_capi._fptr), ctypes.byref(err))
    if st != _capi.AL_OK:
        raise _capi.take_error(err, "cannot read the pixels", st)
    return out.reshape(8, 8)


def digit_from_image(image: Image) -> "numpy.ndarray":
    """The UCI digits preprocessing (``include/attnlite/image_input.h``) of an image: the
    ink's bounding box scaled to 32 pixels and centred, 4x4 blocks counted into 8x8 values
    0..16 (NumPy float32, shape ``(8, 8)``), as ``attnlite classify`` prepares its input.

    ``image`` is the path of an image file (PNG, JPEG, BMP, GIF), its bytes, or RGBA pixels: a
    uint8 array of shape ``(height, width, 4)`` (a canvas).

    Raises :class:`Error` for a file that cannot be decoded, TypeError for other types.
    """
    import numpy as np

    if isinstance(image, (str, os.PathLike)):
        path = os.fspath(image)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise Error(f"cannot read '{path}': {e.strerror or e}") from None
        try:
            return _file_bytes_to_digit(data)
        except Error as e:
            raise Error(f"{path}: {e.message}", e.status) from None
    if isinstance(image, (bytes, bytearray, memoryview)):
        return _file_bytes_to_digit(image)
    if isinstance(image, np.ndarray):
        if image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 4:
            return _rgba_to_digit(image)
        raise TypeError(f"digit_from_image takes RGBA pixels (uint8, shape (height, width, 4)), "
                        f"not an array of {image.dtype} and shape {image.shape}")
    raise TypeError(f"an image must be a path, bytes or a NumPy array, not {type(image).__name__}")


class Classification:
    """One classified image: a copy of what the C library returned.

    Attributes:
        label: the predicted class's label (``"0"`` .. ``"9"`` for the digits model).
        index: its index.
        prob: its probability.
        probs: every class's probability (NumPy float32, ``num_classes``).
        labels: every class's label.
        input: the image the model read (NumPy float32, ``(S, S)`` or ``(C, S, S)``).
        attention: ``(L, NH, T, T)``: ``[layer][head][query][key]`` over the T tokens (the
            CLS token first, then the patches row-major); ``attention=True``, else None.
        rollout: the attention rollout through the layers, ``(T, T)``
            (``attention=True``, else None).
    """

    __slots__ = ("label", "index", "prob", "probs", "labels", "input", "attention", "rollout")

    def top(self, k: int = 3) -> List[tuple]:
        """The k most likely classes as ``(label, prob)`` pairs, most likely first."""
        import numpy as np

        order = np.argsort(-self.probs, kind="stable")[:k]
        return [(self.labels[i], float(self.probs[i])) for i in order]

    def __repr__(self) -> str:
        return f"Classification(label={self.label!r}, prob={self.prob:.4f})"


class Classifier(_capi.Handle):
    """Classifies images with a model of kind ``"vit"`` (a Vision Transformer): one image, or
    a list of them ``max_batch`` at a time in one pass of the model each.

    Args:
        model: a :class:`Model` of kind ``"vit"`` (or a path or shipped name, e.g.
            ``"vit-digits"``).
        device: ``"cpu"`` or ``"cuda"``.
        max_batch: images classified together (1 to 4,096); longer lists go in chunks.
            Default: 1 on the CPU, 64 on ``"cuda"`` (as ``attnlite classify --batch``: a GPU
            pays off on many images in one pass).
        precision: ``"fp32"``, or with ``device="cuda"`` ``"bf16"``: the linear layers'
            matrices held in bfloat16 on the GPU (sums still in fp32).

    Labels equal ``attnlite classify`` for the same image files. A classifier belongs to
    one thread at a time (calls from several threads wait for each other).

    Example::

        c = attnlite.Classifier(attnlite.Model.load("vit-digits"))
        c.classify("digit.png").label            # a file: preprocessed as the CLI does
        c.classify(np.zeros((8, 8))).probs       # the model's own input, values 0..16
        attnlite.Classifier("vit-digits", max_batch=64).classify(["a.png", "b.png"])  # a list
    """

    _free = "al_classifier_free"
    _what = "classifier"

    def __init__(self, model: Union[Model, str], device: str = "cpu", max_batch: Optional[int] = None,
                 precision: str = "fp32") -> None:
        """Makes a classifier with its own buffers; see ``help(attnlite.Classifier)``."""
        super().__init__()
        if not isinstance(model, Model):
            model = Model.load(model)
        if max_batch is None:
            max_batch = 64 if device == "cuda" else 1
        max_batch = _capi.c_int("max_batch", max_batch)
        L = _capi.lib()
        lim = _capi._ClassifierLimits()
        L.al_classifier_limits_default(ctypes.byref(lim))
        lim.max_batch = max_batch
        lim.device = _capi.device_id(device)
        lim.precision = _capi.precision_id(precision, device)
        self.model = model
        """The :class:`Model` it classifies with."""
        self.device = device
        """``"cpu"`` or ``"cuda"``."""
        self.max_batch = max_batch
        """Images classified together."""
        self.precision = precision
        """``"fp32"`` or ``"bf16"``."""
        with model._lock:
            mh = model._handle()
            if model.task != "classify":
                raise Error(f"a Classifier needs a Vision Transformer (kind vit), not {model.kind}")
            self._h = _capi.construct(L.al_classifier_new_with, mh, ctypes.byref(lim))
        h = self._h
        self.image_size: int = L.al_classifier_image_size(h)
        """S: the model reads C x S x S images."""
        self.channels: int = L.al_classifier_channels(h)
        """C."""
        self.num_classes: int = L.al_classifier_num_classes(h)
        """Classes."""
        self.tokens: int = L.al_classifier_tokens(h)
        """T: patches + 1 (the CLS token first)."""
        self.labels: List[str] = [decode(L.al_classifier_label(h, k)) for k in range(self.num_classes)]
        """Each class's label."""

    def _pixels(self, image: Image) -> "numpy.ndarray":
        """One image as the model's input: float32, contiguous, ``(S, S)`` or ``(C, S, S)``."""
        import numpy as np

        C, S = self.channels, self.image_size
        rgba = (isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim == 3
                and image.shape[2] == 4 and image.shape != (C, S, S))
        if isinstance(image, np.ndarray) and not rgba:
            if image.dtype.kind not in "fiub":
                raise TypeError(f"an image array must hold numbers, not {image.dtype}")
            if image.shape not in ((C, S, S),) + (((S, S),) if C == 1 else ()):
                want = f"({S}, {S})" if C == 1 else f"({C}, {S}, {S})"
                raise ValueError(f"this model reads images of shape {want}, got {image.shape} "
                                 f"(RGBA pixels: uint8, shape (height, width, 4); a batch: a list, "
                                 f"or an array of shape (N, {C}, {S}, {S}))")
            return np.ascontiguousarray(image, dtype=np.float32)
        if not (C == 1 and S == 8):
            raise Error(f"this model reads {S}x{S} images of {C} channels; images are prepared "
                        f"for 8x8 one-channel digit models: pass the pixel values as an array")
        return digit_from_image(image)

    @overload
    def classify(self, images: Image, attention: bool = ...) -> Classification: ...

    @overload
    def classify(self, images: Sequence[Image], attention: bool = ...) -> List[Classification]: ...

    def classify(self, images, attention: bool = False):
        """Classifies one image (returns a :class:`Classification`) or several (a list or
        tuple of images, or an array of shape ``(N, C, S, S)``: returns a list, classified
        ``max_batch`` at a time).

        An image is one of:

        * the model's input as a NumPy array of pixel values (digits: 0..16, any real dtype):
          shape ``(S, S)`` for one channel or ``(C, S, S)``; used as is;
        * RGBA pixels, a uint8 array of shape ``(height, width, 4)`` (a canvas), or
        * an image file: its path or its bytes (PNG, JPEG, BMP, GIF);

        the last two are preprocessed with :func:`digit_from_image` (8x8 one-channel digit
        models only), as ``attnlite classify`` does.

        ``attention=True`` records the attention weights and the rollout.

        Each image's result is the one it gets alone to float rounding (a product of many
        rows may sum in another order than one of a single row: probabilities within 4e-7 of
        one at a time over the digits test split, the same labels).

        Raises :class:`Error` for an image that cannot be read (in a list, the message starts
        with its index: ``images[3]: ...``), TypeError for other types, ValueError for an
        array of the wrong shape.
        """
        import numpy as np

        C, S = self.channels, self.image_size
        if isinstance(images, np.ndarray) and images.ndim == 4:
            if images.shape[1:] != (C, S, S):
                raise ValueError(f"a batch array must have shape (N, {C}, {S}, {S}), got {images.shape}")
            batch = [images[i] for i in range(images.shape[0])]
        elif isinstance(images, (list, tuple)):
            batch = list(images)
        else:
            return self._run([self._pixels(images)], attention)[0]
        px = []
        for i, image in enumerate(batch):
            try:
                px.append(self._pixels(image))
            except Error as e:
                raise Error(f"images[{i}]: {e.message}", e.status) from None
            except (TypeError, ValueError) as e:
                raise type(e)(f"images[{i}]: {e}") from None
        out: List[Classification] = []
        for start in range(0, len(px), self.max_batch):
            out += self._run(px[start:start + self.max_batch], attention, start)
        return out

    def _run(self, px: List["numpy.ndarray"], attention: bool,
             first: Optional[int] = None) -> List[Classification]:
        """Classifies len(px) <= max_batch prepared images in one call; ``first``: the index
        of px[0] in the caller's list, which names an image the library refuses
        (``images[3]: ...``; the library counts within the call)."""
        import numpy as np

        n = len(px)
        flat = np.ascontiguousarray(np.stack([p.reshape(-1) for p in px]), dtype=np.float32)
        L = _capi.lib()
        T = self.tokens
        with self._lock:
            h = self._handle()
            st = L.al_classify_batch(h, flat.ctypes.data_as(_capi._fptr), n, 1 if attention else 0)
            if st != _capi.AL_OK:
                msg, at = decode(L.al_classifier_error(h)) or "classification failed", L.al_classifier_error_index(h)
                if first is not None and 0 <= at < n:
                    msg = f"images[{first + at}]: {item_reason(msg)}"
                raise Error(msg, st)
            layers, heads = L.al_classification_layers(h), L.al_classification_heads(h)
            out = []
            for i in range(n):
                r = Classification()
                r.index = L.al_classification_label_at(h, i)
                r.label = self.labels[r.index] if 0 <= r.index < len(self.labels) else ""
                r.prob = float(L.al_classification_prob_at(h, i))
                r.probs = _capi.floats(L.al_classification_probs_at(h, i), self.num_classes)
                r.labels = list(self.labels)
                r.input = px[i].copy()
                r.attention = r.rollout = None
                if attention:
                    r.attention = np.stack([
                        _capi.floats(L.al_classification_attention_at(h, i, l), heads * T * T).reshape(heads, T, T)
                        for l in range(layers)]) if layers else np.zeros((0, heads, T, T), np.float32)
                    ro = np.zeros(T * T, dtype=np.float32)
                    st = L.al_classification_rollout_at(h, i, ro.ctypes.data_as(_capi._fptr))
                    if st == _capi.AL_OK:
                        r.rollout = ro.reshape(T, T)
                out.append(r)
        return out

    def __repr__(self) -> str:
        state = " (closed)" if self.closed else ""
        return (f"<attnlite.Classifier{state} {self.channels}x{self.image_size}x{self.image_size} "
                f"{self.num_classes} classes device={self.device}"
                + (f" max_batch={self.max_batch}" if self.max_batch != 1 else "")
                + (f" precision={self.precision}>" if self.precision != "fp32" else ">"))
