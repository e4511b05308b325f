"""attnlite.Classifier: which digit an image shows, with the Vision Transformer."""

from __future__ import annotations

import ctypes
import os
from typing import TYPE_CHECKING, List, Union

from . import _capi
from ._capi import Error, decode
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
    """Classifies images with a model of kind ``"vit"`` (a Vision Transformer), one at a
    time.

    Args:
        model: a :class:`Model` of kind ``"vit"`` (or a path or shipped name, e.g.
            ``"vit-digits"``).
        device: ``"cpu"`` or ``"cuda"``.

    Labels equal ``attnlite classify`` for the same image files. A classifier belongs to
    one thread at a time (calls from several threads wait for each other).

    Example::

        c = attnlite.Classifier(attnlite.Model.load("vit-digits"))
        c.classify("digit.png").label            # a file: preprocessed as the CLI does
        c.classify(np.zeros((8, 8))).probs       # the model's own input, values 0..16
    """

    _free = "al_classifier_free"
    _what = "classifier"

    def __init__(self, model: Union[Model, str], device: str = "cpu") -> None:
        """Makes a classifier with its own buffers; see ``help(attnlite.Classifier)``."""
        super().__init__()
        if not isinstance(model, Model):
            model = Model.load(model)
        dev = _capi.device_id(device)
        self.model = model
        """The :class:`Model` it classifies with."""
        self.device = device
        L = _capi.lib()
        with model._lock:
            mh = model._handle()
            if model.task != "classify":
                raise Error(f"a Classifier needs a Vision Transformer (kind vit), not {model.kind}")
            self._h = _capi.construct(L.al_classifier_new, mh, dev)
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

    def classify(self, image: Image, attention: bool = False) -> Classification:
        """Classifies one image.

        ``image`` is one of:

        * the model's input as a NumPy array of pixel values (digits: 0..16, any real dtype):
          shape ``(S, S)`` for one channel or ``(C, S, S)``; used as is;
        * RGBA pixels, a uint8 array of shape ``(height, width, 4)`` (a canvas), or
        * an image file: its path or its bytes (PNG, JPEG, BMP, GIF);

        the last two are preprocessed with :func:`digit_from_image` (8x8 one-channel digit
        models only), as ``attnlite classify`` does.

        ``attention=True`` records the attention weights and the rollout.

        Raises :class:`Error` for an image that cannot be read, TypeError for other types,
        ValueError for an array of the wrong shape.
        """
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
                                 f"(RGBA pixels: uint8, shape (height, width, 4))")
            px = np.ascontiguousarray(image, dtype=np.float32)
        else:
            if not (C == 1 and S == 8):
                raise Error(f"this model reads {S}x{S} images of {C} channels; images are prepared "
                            f"for 8x8 one-channel digit models: pass the pixel values as an array")
            px = digit_from_image(image)
        L = _capi.lib()
        with self._lock:
            h = self._handle()
            st = L.al_classify(h, px.ctypes.data_as(_capi._fptr), 1 if attention else 0)
            if st != _capi.AL_OK:
                raise Error(decode(L.al_classifier_error(h)) or "classification failed", st)
            r = Classification()
            r.index = L.al_classification_label(h)
            r.label = self.labels[r.index] if 0 <= r.index < len(self.labels) else ""
            r.prob = float(L.al_classification_prob(h))
            r.probs = _capi.floats(L.al_classification_probs(h), self.num_classes)
            r.labels = list(self.labels)
            r.input = px.copy()
            r.attention = r.rollout = None
            if attention:
                layers, heads, T = L.al_classification_layers(h), L.al_classification_heads(h), self.tokens
                r.attention = np.stack([
                    _capi.floats(L.al_classification_attention(h, l), heads * T * T).reshape(heads, T, T)
                    for l in range(layers)]) if layers else np.zeros((0, heads, T, T), np.float32)
                ro = np.zeros(T * T, dtype=np.float32)
                st = L.al_classification_rollout(h, ro.ctypes.data_as(_capi._fptr))
                if st == _capi.AL_OK:
                    r.rollout = ro.reshape(T, T)
        return r

    def __repr__(self) -> str:
        state = " (closed)" if self.closed else ""
        return (f"<attnlite.Classifier{state} {self.channels}x{self.image_size}x{self.image_size} "
                f"{self.num_classes} classes device={self.device}>")
