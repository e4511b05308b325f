"""The C API (include/attnlite/c_api.h) through ctypes: the shared library, its prototypes,
and the helpers every class of the package uses.

Nothing here is public: use the classes of :mod:`attnlite`.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from typing import Callable, Optional

__all__ = ["Error", "lib", "library_path"]


class Error(Exception):
    """An error reported by attnlite: the C library's message (a model file it refuses, a
    sentence too long, a beam wider than the translator's ``max_beam`` ...) or a use of a
    closed object.

    Attributes:
        message: the message, as the C library wrote it.
        status: the C API's ``al_status`` (1 argument, 2 input, 3 internal), or 0 when the
            error was found on the Python side (a closed object, a missing model file).
    """

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


Error.__module__ = "attnlite"

# al_status
AL_OK = 0
AL_ERR_ARGUMENT = 1
AL_ERR_INPUT = 2
AL_ERR_INTERNAL = 3

# al_device, al_precision
DEVICES = {"cpu": 0, "cuda": 1}
PRECISIONS = {"fp32": 0, "bf16": 1}

TASKS = {0: "translate", 1: "generate", 2: "classify"}  # al_task


class _Limits(ctypes.Structure):
    _fields_ = [
        ("max_batch", ctypes.c_int),
        ("max_beam", ctypes.c_int),
        ("max_tgt_steps", ctypes.c_int),
        ("max_input_bytes", ctypes.c_size_t),
        ("device", ctypes.c_int),
        ("precision", ctypes.c_int),
    ]


class _GeneratorLimits(ctypes.Structure):
    _fields_ = [
        ("max_input_bytes", ctypes.c_size_t),
        ("device", ctypes.c_int),
        ("precision", ctypes.c_int),
    ]


class _ClassifierLimits(ctypes.Structure):
    _fields_ = [
        ("max_batch", ctypes.c_int),
        ("device", ctypes.c_int),
        ("precision", ctypes.c_int),
    ]


class _DecodeOptions(ctypes.Structure):
    _fields_ = [
        ("d2l_compat", ctypes.c_int),
        ("max_steps", ctypes.c_int),
        ("attention", ctypes.c_int),
        ("beam_size", ctypes.c_int),
        ("length_penalty", ctypes.c_float),
    ]


class _GenerateOptions(ctypes.Structure):
    _fields_ = [
        ("max_tokens", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("temperature", ctypes.c_float),
        ("top_k", ctypes.c_int),
        ("top_p", ctypes.c_float),
        ("seed", ctypes.c_uint64),
        ("attention", ctypes.c_int),
    ]


class _FigureOptions(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_char_p),
        ("layer", ctypes.c_int),
        ("head", ctypes.c_int),
        ("cmap", ctypes.c_char_p),
        ("dpi", ctypes.c_int),
        ("format", ctypes.c_char_p),
        ("annotate", ctypes.c_int),
        ("positions", ctypes.c_int),
        ("padding", ctypes.c_int),
        ("d2l_compat", ctypes.c_int),
        ("beam_size", ctypes.c_int),
        ("length_penalty", ctypes.c_float),
        ("model_name", ctypes.c_char_p),
    ]


_p = ctypes.c_void_p
_int = ctypes.c_int
_str = ctypes.c_char_p
_size = ctypes.c_size_t
_fptr = ctypes.POINTER(ctypes.c_float)
_iptr = ctypes.POINTER(ctypes.c_int)
_u8ptr = ctypes.POINTER(ctypes.c_uint8)
_errpp = ctypes.POINTER(ctypes.c_void_p)

# name: (restype, argtypes)
_PROTOTYPES = {
    # errors
    "al_error_message": (_str, [_p]),
    "al_error_free": (None, [_p]),
    # models
    "al_model_load": (_p, [_str, _errpp]),
    "al_model_from_bytes": (_p, [_u8ptr, _size, _errpp]),
    "al_model_free": (None, [_p]),
    "al_model_kind": (_int, [_p]),
    "al_model_kind_name": (_str, [_p]),
    "al_model_task": (_int, [_p]),
    "al_model_description": (_str, [_p]),
    "al_model_num_layers": (_int, [_p]),
    "al_model_num_heads": (_int, [_p]),
    "al_model_num_steps": (_int, [_p]),
    "al_model_num_hiddens": (_int, [_p]),
    "al_model_max_target_steps": (_int, [_p]),
    "al_model_src_vocab_size": (_int, [_p]),
    "al_model_tgt_vocab_size": (_int, [_p]),
    "al_model_weight_bytes": (_size, [_p]),
    "al_model_is_int8": (_int, [_p]),
    "al_model_metadata": (_str, [_p, _str]),
    "al_model_src_token": (_str, [_p, _int]),
    "al_model_tgt_token": (_str, [_p, _int]),
    "al_model_src_id": (_int, [_p, _str]),
    "al_tokenize": (ctypes.c_long, [_str, ctypes.c_char_p, _size, _errpp]),
    "al_split_sentences": (ctypes.c_long, [_str, ctypes.POINTER(_size), _size, _errpp]),
    "al_model_sentences": (ctypes.c_long, [_p, _str, ctypes.POINTER(_size), _size, _errpp]),
    "al_model_is_subword": (_int, [_p]),
    "al_model_tokenize": (ctypes.c_long, [_p, _str, ctypes.c_char_p, _size, _errpp]),
    # translators
    "al_limits_default": (None, [ctypes.POINTER(_Limits)]),
    "al_decode_options_default": (None, [ctypes.POINTER(_DecodeOptions)]),
    "al_translator_new": (_p, [_p, ctypes.POINTER(_Limits), _errpp]),
    "al_translator_free": (None, [_p]),
    "al_translator_error": (_str, [_p]),
    "al_translator_error_index": (_int, [_p]),
    "al_translator_limits": (_int, [_p, ctypes.POINTER(_Limits)]),
    "al_translator_workspace_bytes": (_size, [_p]),
    "al_translate_batch": (_int, [_p, ctypes.POINTER(ctypes.c_char_p), _int,
                                  ctypes.POINTER(_DecodeOptions)]),
    "al_translator_result": (_p, [_p, _int]),
    # results
    "al_result_text": (_str, [_p]),
    "al_result_num_tokens": (_int, [_p]),
    "al_result_tokens": (_iptr, [_p]),
    "al_result_probs": (_fptr, [_p]),
    "al_result_steps": (_int, [_p]),
    "al_result_eos": (_int, [_p]),
    "al_result_src_len": (_int, [_p]),
    "al_result_src_valid": (_int, [_p]),
    "al_result_truncated": (_int, [_p]),
    "al_result_num_unknown": (_int, [_p]),
    "al_result_src_size": (_int, [_p]),
    "al_result_src_ids": (_iptr, [_p]),
    "al_result_layers": (_int, [_p]),
    "al_result_heads": (_int, [_p]),
    "al_result_ld": (_int, [_p]),
    "al_result_enc_self": (_fptr, [_p]),
    "al_result_dec_self": (_fptr, [_p]),
    "al_result_cross": (_fptr, [_p]),
    "al_nbest_size": (_int, [_p]),
    "al_nbest_text": (_str, [_p, _int]),
    "al_nbest_num_tokens": (_int, [_p, _int]),
    "al_nbest_tokens": (_iptr, [_p, _int]),
    "al_nbest_probs": (_fptr, [_p, _int]),
    "al_nbest_length": (_int, [_p, _int]),
    "al_nbest_eos": (_int, [_p, _int]),
    "al_nbest_logp": (ctypes.c_double, [_p, _int]),
    "al_nbest_score": (ctypes.c_double, [_p, _int]),
    # language models
    "al_generate_options_default": (None, [ctypes.POINTER(_GenerateOptions)]),
    "al_generator_limits_default": (None, [ctypes.POINTER(_GeneratorLimits)]),
    "al_generator_new_with": (_p, [_p, ctypes.POINTER(_GeneratorLimits), _errpp]),
    "al_generator_new": (_p, [_p, _int, _errpp]),
    "al_generator_free": (None, [_p]),
    "al_generator_error": (_str, [_p]),
    "al_generator_context": (_int, [_p]),
    "al_generate": (_int, [_p, _str, ctypes.POINTER(_GenerateOptions)]),
    "al_generator_start": (_int, [_p, _str, ctypes.POINTER(_GenerateOptions)]),
    "al_generator_step": (_int, [_p]),
    "al_generation_text": (_str, [_p]),
    "al_generation_continuation": (_str, [_p]),
    "al_generation_num_tokens": (_int, [_p]),
    "al_generation_tokens": (_iptr, [_p]),
    "al_generation_num_prompt": (_int, [_p]),
    "al_generation_num_generated": (_int, [_p]),
    "al_generation_num_unknown": (_int, [_p]),
    "al_generation_probs": (_fptr, [_p]),
    "al_generation_eos": (_int, [_p]),
    "al_generation_done": (_int, [_p]),
    "al_generation_layers": (_int, [_p]),
    "al_generation_heads": (_int, [_p]),
    "al_generation_ld": (_int, [_p]),
    "al_generation_positions": (_int, [_p]),
    "al_generation_attention": (_fptr, [_p]),
    "al_generator_score": (_int, [_p, _str, ctypes.POINTER(ctypes.c_double),
                                  ctypes.POINTER(ctypes.c_long), _iptr]),
    # images and the Vision Transformer
    "al_digit_from_file_bytes": (_int, [_u8ptr, _size, _fptr, _errpp]),
    "al_digit_from_rgba": (_int, [_u8ptr, _int, _int, _fptr, _errpp]),
    "al_classifier_limits_default": (None, [ctypes.POINTER(_ClassifierLimits)]),
    "al_classifier_new_with": (_p, [_p, ctypes.POINTER(_ClassifierLimits), _errpp]),
    "al_classifier_new": (_p, [_p, _int, _errpp]),
    "al_classifier_free": (None, [_p]),
    "al_classifier_error": (_str, [_p]),
    "al_classifier_error_index": (_int, [_p]),
    "al_classifier_image_size": (_int, [_p]),
    "al_classifier_channels": (_int, [_p]),
    "al_classifier_num_classes": (_int, [_p]),
    "al_classifier_tokens": (_int, [_p]),
    "al_classifier_label": (_str, [_p, _int]),
    "al_classify": (_int, [_p, _fptr, _int]),
    "al_classification_label": (_int, [_p]),
    "al_classification_prob": (ctypes.c_float, [_p]),
    "al_classification_probs": (_fptr, [_p]),
    "al_classification_layers": (_int, [_p]),
    "al_classification_heads": (_int, [_p]),
    "al_classification_attention": (_fptr, [_p, _int]),
    "al_classification_rollout": (_int, [_p, _fptr]),
    "al_classify_batch": (_int, [_p, _fptr, _int, _int]),
    "al_classification_count": (_int, [_p]),
    "al_classification_label_at": (_int, [_p, _int]),
    "al_classification_prob_at": (ctypes.c_float, [_p, _int]),
    "al_classification_probs_at": (_fptr, [_p, _int]),
    "al_classification_attention_at": (_fptr, [_p, _int, _int]),
    "al_classification_rollout_at": (_int, [_p, _int, _fptr]),
    # figures
    "al_figure_options_default": (None, [ctypes.POINTER(_FigureOptions)]),
    "al_figure_translation_map": (_p, [_p, _str, ctypes.POINTER(_FigureOptions), _errpp]),
    "al_figure_data": (_p, [_p]),
    "al_figure_size": (_size, [_p]),
    "al_figure_format": (_str, [_p]),
    "al_figure_width": (_int, [_p]),
    "al_figure_height": (_int, [_p]),
    "al_figure_rows": (_int, [_p]),
    "al_figure_cols": (_int, [_p]),
    "al_figure_caption": (_str, [_p]),
    "al_figure_text": (_str, [_p]),
    "al_figure_free": (None, [_p]),
}

_PACKAGE_DIR = Path(__file__).resolve().parent


def _candidates() -> list:
    env = os.environ.get("ATTNLITE_LIBRARY")
    if env:
        return [Path(env)]
    return [
        _PACKAGE_DIR / "_lib" / "libattnlite_c.so",
        _PACKAGE_DIR.parent.parent / "build" / "python" / "libattnlite_c.so",
    ]


def library_path() -> str:
    """The path of the shared library the package loads: ``$ATTNLITE_LIBRARY`` when set, else
    ``attnlite/_lib/libattnlite_c.so`` (where ``python/build.sh`` copies it), else
    ``build/python/libattnlite_c.so`` of the source tree. Raises :class:`Error` when none
    exists."""
    tried = _candidates()
    for c in tried:
        if c.is_file():
            return str(c)
    raise Error(
        "cannot find libattnlite_c.so (looked at " + ", ".join(str(c) for c in tried) +
        "): run python/build.sh, or set ATTNLITE_LIBRARY to its path")


_lib_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None


def lib() -> ctypes.CDLL:
    """The loaded library with every prototype set (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is None:
            path = library_path()
            try:
                dll = ctypes.CDLL(path)
            except OSError as e:
                raise Error(f"cannot load {path}: {e}") from None
            for name, (restype, argtypes) in _PROTOTYPES.items():
                try:
                    fn = getattr(dll, name)
                except AttributeError:
                    raise Error(f"{path} lacks {name}: rebuild it with python/build.sh") from None
                fn.restype = restype
                fn.argtypes = argtypes
            _lib = dll
    return _lib


# ---- helpers -------------------------------------------------------------------------------

def decode(b: Optional[bytes]) -> str:
    """A C string from the library as str ("" for NULL)."""
    return b.decode("utf-8", errors="replace") if b else ""


def item_reason(msg: str) -> str:
    """The reason in the library's message about one item of a batch call, which names the
    item by its place in the call (``sentence 1 of 8: empty sentence``): all that follows
    the first ": ", colons included (the whole message when it has none)."""
    return msg.split(": ", 1)[-1]


def encode(s: object, what: str) -> bytes:
    """A str argument as the NUL-terminated UTF-8 the C API reads. Lone surrogates pass
    through as the invalid UTF-8 they stand for, for the library to refuse with its message."""
    if not isinstance(s, str):
        raise TypeError(f"{what} must be a str, not {type(s).__name__}")
    if "\0" in s:
        raise ValueError(f"{what} contains a NUL character")
    return s.encode("utf-8", errors="surrogatepass")


def c_int(name: str, v: object) -> int:
    """An int argument for a C int field: TypeError for another type, Error past a C int
    (ctypes would wrap it into range: 2**32 + 2 would become 2). The library checks the range
    that makes sense."""
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"{name} must be an int, not {type(v).__name__}")
    if not -2**31 <= v < 2**31:
        raise Error(f"limits: {name} {v} is out of range")
    return v


def device_id(device: object) -> int:
    if not isinstance(device, str):
        raise TypeError(f"device must be 'cpu' or 'cuda', not {type(device).__name__}")
    if device not in DEVICES:
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    return DEVICES[device]


def precision_id(precision: object, device: str) -> int:
    if not isinstance(precision, str):
        raise TypeError(f"precision must be 'fp32' or 'bf16', not {type(precision).__name__}")
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be 'fp32' or 'bf16', got {precision!r}")
    if precision == "bf16" and device != "cuda":
        raise ValueError("precision 'bf16' needs device 'cuda': the CPU reads its weights as stored")
    return PRECISIONS[precision]


def construct(fn: Callable, *args) -> int:
    """Calls a constructor of the C API (last argument al_error**) and returns the new handle,
    or raises Error with the library's message."""
    err = ctypes.c_void_p()
    h = fn(*args, ctypes.byref(err))
    if not h:
        raise take_error(err, "failed")
    return h


def take_error(err: ctypes.c_void_p, fallback: str, status: int = AL_ERR_INPUT) -> Error:
    """An Error from an al_error the library handed out (freed here)."""
    if not err.value:
        return Error(fallback, status)
    L = lib()
    msg = decode(L.al_error_message(err)) or fallback
    L.al_error_free(err)
    return Error(msg, status)


def floats(ptr, n: int):
    """A NumPy float32 copy of n floats at ptr (empty for NULL)."""
    import numpy as np

    if not ptr or n <= 0:
        return np.zeros(0, dtype=np.float32)
    return np.ctypeslib.as_array(ptr, shape=(n,)).copy()


def ints(ptr, n: int) -> list:
    if not ptr or n <= 0:
        return []
    return ptr[:n]


class Handle:
    """An owned C handle with a lock: one call at a time on it, and close() waits for the
    call in flight. Subclasses set _free (the al_*_free name) and _what (for messages)."""

    _free = ""
    _what = "object"

    def __init__(self) -> None:
        self._h: Optional[int] = None
        self._lock = threading.RLock()

    def _handle(self) -> int:
        """The handle (callers hold self._lock), or Error when closed."""
        if self._h is None:
            raise Error(f"this {self._what} is closed")
        return self._h

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._h is None

    def close(self) -> None:
        """Frees the C object now (also done when the Python object is collected). Further
        calls raise :class:`Error`; closing twice is fine."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            h, self._h = getattr(self, "_h", None), None
            if h is not None:
                getattr(lib(), self._free)(h)

    def __enter__(self):
        """``with obj:`` closes obj at the end of the block."""
        return self

    def __exit__(self, *exc) -> None:
        """Closes the object."""
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
