"""attnlite.Model: a model file (safetensors) loaded by the C library."""

from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from . import _capi
from ._capi import Error, decode, encode

__all__ = ["Model", "models_dir", "resolve_model", "tokenize"]

_SHIPPED = ("transformer-fra-bpe", "transformer-fra", "transformer-d2l", "bahdanau-d2l",
            "lm-fra", "vit-digits")


def models_dir() -> Optional[str]:
    """The folder of the shipped models: ``$ATTNLITE_MODELS`` when set, else ``models/`` of
    the source tree this package runs from, else the source tree's ``models/`` that
    ``python/build.sh`` recorded for an installed package, else
    ``<prefix>/share/attnlite/models`` of an installed attnlite; None when none exists."""
    env = os.environ.get("ATTNLITE_MODELS")
    if env:
        return env
    here = Path(__file__).resolve().parent
    folders = [here.parent.parent / "models"]
    try:
        recorded = (here / "_lib" / "models_dir").read_text(encoding="utf-8").strip()
        if recorded:
            folders.append(Path(recorded))
    except (OSError, ValueError):
        pass
    folders += [Path(sys.prefix) / "share" / "attnlite" / "models",
                Path("/usr/local/share/attnlite/models"), Path("/usr/share/attnlite/models")]
    for d in folders:
        if d.is_dir():
            return str(d)
    return None


def resolve_model(name: Union[str, "os.PathLike[str]"]) -> str:
    """The file a model name stands for, as the command line resolves ``--model``: a name
    without '/' and without ``.safetensors`` (``"transformer-fra-bpe"``) is a shipped model,
    ``<models_dir()>/NAME.safetensors`` (else ``./models/NAME.safetensors``); anything else
    is a path and comes back as is."""
    if isinstance(name, os.PathLike):
        return os.fspath(name)
    if not isinstance(name, str):
        raise TypeError(f"a model path or name must be a str or os.PathLike, not {type(name).__name__}")
    if "/" in name or ".safetensors" in name:
        return name
    file = name + ".safetensors"
    d = models_dir()
    tried = []
    for folder in ([d] if d else []) + ["models"]:
        p = os.path.join(folder, file)
        tried.append(p)
        if os.path.isfile(p):
            return p
    raise Error(f"cannot find the shipped model '{file}' (looked at {', '.join(tried)}; "
                f"shipped names: {', '.join(_SHIPPED)}); set ATTNLITE_MODELS or pass a path")


def tokenize(sentence: str) -> List[str]:
    """The book's preprocessing and split (d2l ``preprocess_nmt``): the lowercased words and
    punctuation of ``sentence``. For what a given model reads use :meth:`Model.tokenize`."""
    s = encode(sentence, "sentence")
    L = _capi.lib()
    return _read_tokens(lambda out, cap, err: L.al_tokenize(s, out, cap, err))


def split_sentences(text: str) -> List[str]:
    """The sentences of ``text``, as ``attnlite translate`` cuts a text before it translates
    each sentence alone (after . ! ? and a space; not after "Mr." and the like:
    ``include/attnlite/sentences.h``), without the spaces between them::

        >>> attnlite.split_sentences("I'm home. Mr. Smith is here!  ok")
        ["I'm home.", 'Mr. Smith is here!', 'ok']

    :meth:`Model.sentences` keeps those a model reads a token of, as the command line does."""
    b = encode(text, "text")
    return _read_spans(b, lambda spans, cap, err: _capi.lib().al_split_sentences(b, spans, cap, err))


def _read_spans(b: bytes, call) -> List[str]:
    """Runs an al_*sentences call twice (count, then spans) and cuts ``b`` at its spans."""
    err = ctypes.c_void_p()
    n = call(None, 0, ctypes.byref(err))
    if n < 0:
        raise _capi.take_error(err, "splitting sentences failed")
    spans = (ctypes.c_size_t * (2 * n))()
    if n and call(spans, n, ctypes.byref(err)) != n:
        raise _capi.take_error(err, "splitting sentences failed")
    return [b[spans[2 * k]:spans[2 * k + 1]].decode("utf-8", errors="surrogatepass") for k in range(n)]


def _read_tokens(call) -> List[str]:
    """Runs an al_*tokenize call twice (size, then text) and splits its output."""
    err = ctypes.c_void_p()
    n = call(None, 0, ctypes.byref(err))
    if n < 0:
        raise _capi.take_error(err, "tokenize failed")
    buf = ctypes.create_string_buffer(n + 1)
    n2 = call(buf, n + 1, ctypes.byref(err))
    if n2 < 0:
        raise _capi.take_error(err, "tokenize failed")
    text = decode(buf.value)
    return text.split(" ") if text else []


class Model(_capi.Handle):
    """A model loaded by the C library: a translator (``"transformer"``, ``"bahdanau"``), a
    decoder-only language model (``"lm"``) or a Vision Transformer (``"vit"``).

    Make one with :meth:`Model.load` (a path or a shipped name) or :meth:`Model.from_bytes`.
    A model is immutable and may be shared by any number of :class:`~attnlite.Translator`,
    :class:`~attnlite.Generator` and :class:`~attnlite.Classifier` objects on any number of
    threads. Each of them keeps the model's weights alive: closing the model (``close()`` or
    a ``with`` block) while they are in use is safe; only the model's own methods stop
    working.

    Example::

        m = attnlite.Model.load("transformer-d2l")
        m.kind                # 'transformer'
        m.config["layers"]    # 2
        m.tokenize("I'm home.")   # ["i'm", 'home', '.']
    """

    _free = "al_model_free"
    _what = "model"

    def __init__(self, _handle: int, source: str) -> None:
        """Use :meth:`load` or :meth:`from_bytes`."""
        super().__init__()
        self._h = _handle
        self.source = source
        """Where the model came from: its path, or ``"<bytes>"``."""
        self._src_vocab: Optional[List[str]] = None
        self._tgt_vocab: Optional[List[str]] = None
        with self._lock:
            L = _capi.lib()
            self._kind = decode(L.al_model_kind_name(self._h))
            self._task = _capi.TASKS[L.al_model_task(self._h)]

    # ---- construction ---------------------------------------------------------------------
    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Model":
        """Loads a model file, validating all of it (header, config, vocabularies, every
        tensor). ``path`` is a file path or a shipped model's name (``"transformer-fra-bpe"``,
        ``"transformer-fra"``, ``"transformer-d2l"``, ``"bahdanau-d2l"``, ``"lm-fra"``,
        ``"vit-digits"``; see :func:`resolve_model`). The file is mapped and its weights used in
        place: it must stay unchanged while the model lives.

        Raises :class:`Error` with the library's message for a missing or invalid file.
        """
        p = resolve_model(path)
        if "\0" in p:
            raise ValueError("path contains a NUL character")
        h = _capi.construct(_capi.lib().al_model_load, os.fsencode(p))
        return cls(h, p)

    @classmethod
    def from_bytes(cls, data: Union[bytes, bytearray, memoryview]) -> "Model":
        """Loads a model from the bytes of a safetensors file (the model keeps its own copy).

        Raises :class:`Error` for bytes that are not a valid model, TypeError for anything
        that is not bytes-like."""
        if isinstance(data, str) or not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"from_bytes needs bytes, bytearray or memoryview, not {type(data).__name__}")
        mv = memoryview(data)
        n = mv.nbytes
        buf = (ctypes.c_uint8 * n).from_buffer_copy(mv) if n else None
        h = _capi.construct(_capi.lib().al_model_from_bytes, buf, n)
        return cls(h, "<bytes>")

    # ---- properties -----------------------------------------------------------------------
    def _get(self, name: str, *args) -> Any:
        with self._lock:
            return getattr(_capi.lib(), name)(self._handle(), *args)

    @property
    def kind(self) -> str:
        """``"transformer"``, ``"bahdanau"``, ``"lm"`` or ``"vit"`` (kept after close)."""
        return self._kind

    @property
    def task(self) -> str:
        """What it does: ``"translate"`` (a :class:`Translator`), ``"generate"`` (a
        :class:`Generator`) or ``"classify"`` (a :class:`Classifier`) (kept after close)."""
        return self._task

    @property
    def config(self) -> Dict[str, Any]:
        """The model's dimensions, from the C API's getters:

        ``kind``, ``layers`` (encoder/decoder layers), ``heads`` (1 for Bahdanau), ``steps``
        (the training length, i.e. the source padding), ``hiddens``, ``max_target_steps``
        (the largest ``max_steps`` a translator allows), ``src_vocab_size``,
        ``tgt_vocab_size``, ``weight_bytes``, ``int8``, ``subword``; and ``file``: the
        file's own ``attnlite.config`` metadata (a dict, as the training script wrote it).
        """
        with self._lock:
            h = self._handle()
            L = _capi.lib()
            cfg: Dict[str, Any] = {
                "kind": self._kind,
                "layers": L.al_model_num_layers(h),
                "heads": L.al_model_num_heads(h),
                "steps": L.al_model_num_steps(h),
                "hiddens": L.al_model_num_hiddens(h),
                "max_target_steps": L.al_model_max_target_steps(h),
                "src_vocab_size": L.al_model_src_vocab_size(h),
                "tgt_vocab_size": L.al_model_tgt_vocab_size(h),
                "weight_bytes": int(L.al_model_weight_bytes(h)),
                "int8": bool(L.al_model_is_int8(h)),
                "subword": bool(L.al_model_is_subword(h)),
            }
            raw = L.al_model_metadata(h, b"attnlite.config")
        try:
            cfg["file"] = json.loads(decode(raw)) if raw else {}
        except ValueError:
            cfg["file"] = {}
        return cfg

    def metadata(self, key: str, default: Optional[str] = None) -> Optional[str]:
        """A metadata value of the file (``"attnlite.config"``, ``"attnlite.license"``,
        ``"attnlite.training"`` ...), or ``default`` when absent."""
        k = encode(key, "key")
        v = self._get("al_model_metadata", k)
        return default if v is None else decode(v)

    @property
    def license(self) -> Optional[str]:
        """The file's ``attnlite.license`` metadata (where its training data came from)."""
        return self.metadata("attnlite.license")

    @property
    def is_subword(self) -> bool:
        """True for a sub-word translator (a byte-pair merge table in the file): it reads
        cased English in pieces and writes detokenized French."""
        return bool(self._get("al_model_is_subword"))

    @property
    def src_vocab(self) -> List[str]:
        """The source vocabulary: token i is the string of id i (a new list each time)."""
        return list(self._vocab("src"))

    @property
    def tgt_vocab(self) -> List[str]:
        """The target vocabulary (for a language model, its only vocabulary)."""
        return list(self._vocab("tgt"))

    def _vocab(self, which: str) -> List[str]:
        """The cached vocabulary (read once from the library; kept after close)."""
        cached = self._src_vocab if which == "src" else self._tgt_vocab
        if cached is not None:
            return cached
        with self._lock:
            h = self._handle()
            L = _capi.lib()
            size = (L.al_model_src_vocab_size if which == "src" else L.al_model_tgt_vocab_size)(h)
            get = L.al_model_src_token if which == "src" else L.al_model_tgt_token
            vocab = [decode(get(h, i)) for i in range(size)]
        if which == "src":
            self._src_vocab = vocab
        else:
            self._tgt_vocab = vocab
        return vocab

    def src_id(self, token: str) -> int:
        """A source token's id (0, ``<unk>``, when the vocabulary lacks it)."""
        return int(self._get("al_model_src_id", encode(token, "token")))

    def tokenize(self, sentence: str) -> List[str]:
        """The source tokens this model reads from ``sentence``, once normalized as a
        translator normalizes it: the book's lowercased words, or for a sub-word model its
        pieces (``"Where is the station?"`` -> ``['Wh', 'ere_', 'is_', ...]``). Not truncated
        to the model's ``steps``. Raises :class:`Error` for invalid UTF-8."""
        s = encode(sentence, "sentence")
        with self._lock:
            h = self._handle()
            L = _capi.lib()
            return _read_tokens(lambda out, cap, err: L.al_model_tokenize(h, s, out, cap, err))

    def sentences(self, text: str) -> List[str]:
        """The sentences this model translates one at a time from ``text``, as the command
        line cuts a text (``Model::sentences``): those of :func:`split_sentences` that read as
        at least one token (a sentence of emoji alone is left out); when none does, the whole
        ``text``, for translating it to say why it is refused. Never empty::

            >>> model.sentences("I'm home. Where is the station? 🙂")
            ["I'm home.", 'Where is the station?']

        Translate them with ``Translator.translate(list)`` and join the texts with a space."""
        b = encode(text, "text")
        with self._lock:
            h = self._handle()
            return _read_spans(b, lambda spans, cap, err:
                               _capi.lib().al_model_sentences(h, b, spans, cap, err))

    def __repr__(self) -> str:
        if self.closed:
            return f"<attnlite.Model {self._kind} (closed) from {self.source}>"
        return f"<attnlite.Model {self._kind} from {self.source}>"
