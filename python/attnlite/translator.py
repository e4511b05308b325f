"""attnlite.Translator: English to French with a Transformer or Bahdanau model."""

from __future__ import annotations

import ctypes
from typing import List, NamedTuple, Optional, Sequence, Union, overload

from . import _capi
from ._capi import Error, decode, encode, item_reason
from .figure import Figure, heatmap
from .model import Model

__all__ = ["Translator", "Translation", "Hypothesis"]


class _HypothesisFields(NamedTuple):
    text: str
    tokens: List[str]
    logp: float
    score: float


class Hypothesis(_HypothesisFields):
    """One entry of an n-best list: a tuple ``(text, tokens, logp, score)`` with more
    attributes.

    Attributes:
        text: the translation.
        tokens: its target tokens (without ``<eos>``).
        logp: summed log-probabilities of its tokens (and of ``<eos>`` when it came).
        score: ``logp / length ** alpha``, the rank of beam search.
        ids: the token ids (list of int).
        probs: each token's softmax probability (NumPy float32).
        length: ``len(tokens)``, plus 1 with ``<eos>``.
        eos: True when the hypothesis ended with ``<eos>``.
    """

    ids: List[int]
    length: int
    eos: bool

    def __repr__(self) -> str:
        return f"Hypothesis(text={self.text!r}, logp={self.logp:.4f}, score={self.score:.4f})"


class Translation:
    """One translated sentence: a copy of everything the C library returned, so it stays
    valid after later calls and after the translator is closed.

    Attributes:
        source: the sentence as given.
        text: the French translation (a sub-word model's pieces detokenized).
        tokens: the target tokens, without ``<eos>`` (list of str).
        ids: their ids (list of int).
        probs: the softmax probability of each chosen token (NumPy float32, ``len(tokens)``).
        steps: decoder calls (``len(tokens) + 1`` when ``<eos>`` came).
        eos: True when decoding stopped at ``<eos>`` (else at the step limit).
        src_tokens: the S padded source tokens the encoder read (the columns of the
            attention arrays): the sentence's tokens, ``<eos>``, then ``<pad>``.
        src_ids: their ids.
        src_len: source tokens + ``<eos>`` before truncation.
        src_valid: ``min(src_len, S)``, the positions that are not padding.
        truncated: True when the sentence had more than S - 1 tokens (cut as the book does).
        num_unknown: source words (sub-word models: characters) read as ``<unk>``.
        nbest: the n-best list, best first (:class:`Hypothesis` tuples ``(text, tokens,
            logp, score)``): ``beam`` entries after beam search, one after greedy decoding.
        enc_self: encoder self-attention, ``(L, NH, S, S)``: ``[layer][head][query][key]``
            (Transformer, ``attention=True``; else None).
        dec_self: decoder self-attention, ``(L, steps, NH, steps)``: ``[layer][t][head][k]``,
            zero for ``k > t`` (Transformer, ``attention=True``; else None).
        cross: encoder-decoder attention, ``(L, steps, NH, S)``: ``[layer][t][head][s]``
            for a Transformer, ``(steps, S)``: ``[t][s]`` for Bahdanau (``attention=True``;
            else None).

    The C headers (``include/attnlite/translate.h``) give the decoder arrays ``ld`` rows,
    the translator's largest target length, of which the first ``steps`` hold data; here they
    are cut to those ``steps`` rows (and columns), as ``attnlite translate --json --weights``
    writes them.
    """

    __slots__ = ("source", "text", "tokens", "ids", "probs", "steps", "eos", "src_tokens",
                 "src_ids", "src_len", "src_valid", "truncated", "num_unknown", "nbest",
                 "enc_self", "dec_self", "cross")

    def __repr__(self) -> str:
        return f"Translation({self.text!r})"

    def __str__(self) -> str:
        return self.text


Sentences = Union[str, Sequence[str]]


def source_length(model: Model, sentence: str) -> int:
    """The tokens ``model`` reads from ``sentence``: the order in which lists are batched (0
    for a sentence the library refuses, whose batch then fails or falls back as it would in
    any order)."""
    try:
        return len(model.tokenize(sentence))
    except Error:
        return 0


def cuda_batch(beam: int) -> int:
    """Sentences decoded together on a GPU by default, as ``attnlite translate --batch`` on
    cuda: 256, or 1,024 rows over the beam width past a beam of 4."""
    return max(1, min(256, 1024 // max(beam, 1)))


def _numbers(idx: List[int]) -> str:
    """1-based sentence numbers of a chunk: ``3..5`` when they follow one another, else the
    first eight of them in order and how many more."""
    n = sorted(i + 1 for i in idx)
    if n[-1] - n[0] == len(n) - 1:
        return f"{n[0]}..{n[-1]}"
    more = f" and {len(n) - 8} more" if len(n) > 8 else ""
    return ", ".join(str(x) for x in n[:8]) + more


def _chunk_message(msg: str, at: int, idx: List[int], total: int) -> str:
    """The library's message for a chunk of a list of ``total`` sentences (``idx``: their
    places in the list; ``at``: ``al_translator_error_index``, the place in the chunk of the
    sentence it refused, -1 for none). The library names that sentence by its place in the
    chunk (``sentence 1 of 2: empty sentence``): here by its 1-based number in the list, or
    not at all for a single str; what is no one sentence's fault (a beam too wide) names the
    chunk's sentences."""
    msg = msg or "translation failed"
    if 0 <= at < len(idx):
        reason = item_reason(msg)
        return reason if total == 1 else f"sentence {idx[at] + 1}: {reason}"
    return msg if total == 1 else f"sentences {_numbers(idx)}: {msg}"


class Translator(_capi.Handle):
    """Translates English sentences with a model of kind ``"transformer"`` or
    ``"bahdanau"``: greedy decoding as the book's ``predict_seq2seq``, or beam search.

    Args:
        model: a :class:`Model` (or a path or shipped name, loaded for this translator).
        max_batch: sentences decoded together; longer lists are translated in chunks.
            Default: 1 on the CPU; on ``"cuda"`` 256, or 1,024 rows over ``max_beam`` past a
            beam of 4 (as ``attnlite translate --batch``: a GPU pays off on many sentences at
            once).
        max_beam: the widest beam :meth:`translate` accepts.
        device: ``"cpu"``, or ``"cuda"`` (a library built with ``-DATTNLITE_CUDA=ON``, a CUDA
            device and a Transformer).
        max_tgt_steps: the longest translation in tokens (0: the model's ``steps``); at most
            ``model.config["max_target_steps"]``. ``translate(max_steps=N)`` needs
            ``N <= max_tgt_steps``.
        precision: ``"fp32"``, or with ``device="cuda"`` ``"bf16"``: the linear layers'
            matrices held in bfloat16 on the GPU (half the bytes a step reads; sums still in
            fp32). Tokens may differ from fp32's where two candidates are close.

    A translator belongs to one thread at a time; here calls from several threads on one
    translator simply wait for each other. Use one translator per thread for parallel work
    (they may share one model). The C library runs without the GIL.

    Example::

        with attnlite.Translator(attnlite.Model.load("transformer-d2l")) as tr:
            tr.translate("i'm home .").text           # "je suis chez moi ."
            [t.text for t in tr.translate(["go .", "i lost ."])]
    """

    _free = "al_translator_free"
    _what = "translator"

    def __init__(self, model: Union[Model, str], max_batch: Optional[int] = None, max_beam: int = 4,
                 device: str = "cpu", max_tgt_steps: int = 0, precision: str = "fp32") -> None:
        """Makes a translator with its own buffers; see ``help(attnlite.Translator)``."""
        super().__init__()
        if not isinstance(model, Model):
            model = Model.load(model)
        max_beam = _capi.c_int("max_beam", max_beam)
        max_tgt_steps = _capi.c_int("max_tgt_steps", max_tgt_steps)
        if max_batch is None:
            max_batch = cuda_batch(max_beam) if device == "cuda" else 1
        max_batch = _capi.c_int("max_batch", max_batch)
        dev = _capi.device_id(device)
        prec = _capi.precision_id(precision, device)
        L = _capi.lib()
        lim = _capi._Limits()
        L.al_limits_default(ctypes.byref(lim))
        lim.max_batch = max_batch
        lim.max_beam = max_beam
        lim.max_tgt_steps = max_tgt_steps
        lim.device = dev
        lim.precision = prec
        self.model = model
        """The :class:`Model` it translates with."""
        self.device = device
        """``"cpu"`` or ``"cuda"``."""
        self.precision = precision
        """``"fp32"`` or ``"bf16"``."""
        with model._lock:
            mh = model._handle()
            if model.task != "translate":
                raise Error(f"a Translator needs a translation model (transformer or bahdanau), "
                            f"not {model.kind}")
            # The vocabularies, copied once: the results name their tokens with them, also
            # after the model is closed.
            self._src = model._vocab("src")
            self._tgt = model._vocab("tgt")
            self._h = _capi.construct(L.al_translator_new, mh, ctypes.byref(lim))
        got = _capi._Limits()
        L.al_translator_limits(self._h, ctypes.byref(got))
        self.max_batch: int = got.max_batch
        """Sentences per batch."""
        self.max_beam: int = got.max_beam
        """The widest beam."""
        self.max_tgt_steps: int = got.max_tgt_steps
        """The longest translation in tokens."""

    @property
    def workspace_bytes(self) -> int:
        """Bytes of the translator's buffers."""
        with self._lock:
            return int(_capi.lib().al_translator_workspace_bytes(self._handle()))

    @overload
    def translate(self, sentences: str, beam: int = ..., alpha: float = ..., attention: bool = ...,
                  max_steps: int = ..., d2l_compat: bool = ...) -> Translation: ...

    @overload
    def translate(self, sentences: Sequence[str], beam: int = ..., alpha: float = ...,
                  attention: bool = ..., max_steps: int = ..., d2l_compat: bool = ...) -> List[Translation]: ...

    def translate(self, sentences: Sentences, beam: int = 1, alpha: float = 0.0,
                  attention: bool = False, max_steps: int = 0,
                  d2l_compat: bool = False) -> Union[Translation, List[Translation]]:
        """Translates one sentence (a str: returns a :class:`Translation`) or a list of them
        (returns a list, decoded ``max_batch`` at a time).

        Each sentence is normalized first (typographic apostrophes and quotes, dashes,
        Unicode spaces), then split into the model's tokens (:meth:`Model.tokenize`). A str is
        translated as one sentence: cut a text of several with
        :meth:`Model.sentences` first (``tr.model.sentences(text)``), as the command line
        does, and join the translations' texts with a space.

        Args:
            beam: 1 for greedy decoding; K > 1 for beam search with K hypotheses
                (``K <= max_beam``); the n-best list is ``Translation.nbest``.
            alpha: length penalty: hypotheses ranked by ``logp / length ** alpha``.
            attention: record the attention weights (``enc_self``, ``dec_self``, ``cross``).
            max_steps: stop after this many decoding steps (0: ``max_tgt_steps``).
            d2l_compat: Transformer: position 0 at every decoder step, exactly as the book's
                ``predict_seq2seq`` (default: position t at step t).

        A list longer than ``max_batch`` is decoded in chunks of like source lengths (the
        default model's 1,896 test sentences took 4.7 s instead of 5.3-6.3 s at
        ``max_batch=32`` on one core); the results come back in the list's order.

        Raises:
            Error: a sentence the library refuses (empty, too long, invalid UTF-8), a beam
                wider than ``max_beam``, ``max_steps`` above ``max_tgt_steps``, a closed
                translator. When a sentence of a list is refused, the whole call fails; the
                message names it (1-based: ``sentence 2: empty sentence``), or the sentences
                of the chunk that failed when no one sentence is at fault.
            TypeError: sentences that are not a str or a list of str.

        The C library's result is only valid until its next translation; everything is
        copied out into the returned objects, which stay valid.
        """
        single = isinstance(sentences, str)
        if single:
            batch = [sentences]
        elif isinstance(sentences, (list, tuple)):
            batch = list(sentences)
        else:
            raise TypeError(f"sentences must be a str or a list of str, not {type(sentences).__name__}")
        encoded = [encode(s, "sentence") for s in batch]
        for name, v in (("beam", beam), ("max_steps", max_steps)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"{name} must be an int, not {type(v).__name__}")
        if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
            raise TypeError(f"alpha must be a number, not {type(alpha).__name__}")
        L = _capi.lib()
        opts = _capi._DecodeOptions()
        L.al_decode_options_default(ctypes.byref(opts))
        opts.d2l_compat = 1 if d2l_compat else 0
        opts.max_steps = max_steps
        opts.attention = 1 if attention else 0
        opts.beam_size = beam
        opts.length_penalty = float(alpha)
        # More sentences than one chunk: chunks of like source lengths (a chunk decodes until
        # its longest translation ends), the results put back in the input's order.
        order = list(range(len(batch)))
        if self.max_batch > 1 and len(batch) > self.max_batch:
            order.sort(key=lambda i: source_length(self.model, batch[i]))
        out: List[Optional[Translation]] = [None] * len(batch)
        with self._lock:
            h = self._handle()
            for start in range(0, len(order), self.max_batch):
                idx = order[start:start + self.max_batch]
                arr = (ctypes.c_char_p * len(idx))(*(encoded[i] for i in idx))
                st = L.al_translate_batch(h, arr, len(idx), ctypes.byref(opts))
                if st != _capi.AL_OK:
                    raise Error(_chunk_message(decode(L.al_translator_error(h)), L.al_translator_error_index(h),
                                               idx, len(batch)), st)
                for k, i in enumerate(idx):
                    out[i] = self._result(L, L.al_translator_result(h, k), batch[i])
        return out[0] if single else out  # type: ignore[return-value]


    def heatmap(self, sentence: str, **options) -> "Figure":
        """The attention maps of ``sentence`` translated by this translator's model, as
        ``attnlite heatmap translate --model MODEL SENTENCE [options]`` draws them: a
        :class:`~attnlite.Figure` (the PNG or SVG file's bytes, shown inline by Jupyter).
        Options: ``kind`` (``"cross"``, ``"enc"``, ``"dec-self"``), ``layer``, ``head``
        (1-based; None for all), ``cmap``, ``dpi``, ``format`` (``"png"``, ``"svg"``),
        ``annotate``, ``positions``, ``padding``, ``beam``, ``alpha``, ``d2l_compat``,
        ``model_name``; see :func:`attnlite.heatmap`.

        The figure decodes the sentence itself, as the command line does (its own greedy or
        beam search, with the attention recorded); this translator's buffers and last results
        are not touched. Raises :class:`Error` as :func:`attnlite.heatmap`.

        Example::

            tr.heatmap("i'm home .", kind="enc", layer=2)          # in a notebook: the figure
            tr.heatmap("i'm home .", format="svg").save("cross.svg")
        """
        return heatmap(self.model, sentence, **options)

    def _result(self, L, r: int, source: str) -> Translation:
        """A copy of result r (the caller holds the lock)."""
        import numpy as np

        t = Translation()
        t.source = source
        t.text = decode(L.al_result_text(r))
        n = L.al_result_num_tokens(r)
        t.ids = _capi.ints(L.al_result_tokens(r), n)
        t.tokens = [self._tgt_token(i) for i in t.ids]
        t.probs = _capi.floats(L.al_result_probs(r), n)
        t.steps = L.al_result_steps(r)
        t.eos = bool(L.al_result_eos(r))
        S = L.al_result_src_size(r)
        t.src_ids = _capi.ints(L.al_result_src_ids(r), S)
        t.src_tokens = [self._src[i] if 0 <= i < len(self._src) else "" for i in t.src_ids]
        t.src_len = L.al_result_src_len(r)
        t.src_valid = L.al_result_src_valid(r)
        t.truncated = bool(L.al_result_truncated(r))
        t.num_unknown = L.al_result_num_unknown(r)
        nbest = []
        for k in range(L.al_nbest_size(r)):
            nk = L.al_nbest_num_tokens(r, k)
            ids = _capi.ints(L.al_nbest_tokens(r, k), nk)
            hyp = Hypothesis(decode(L.al_nbest_text(r, k)), [self._tgt_token(i) for i in ids],
                             float(L.al_nbest_logp(r, k)), float(L.al_nbest_score(r, k)))
            hyp.ids = ids
            hyp.probs = _capi.floats(L.al_nbest_probs(r, k), nk)
            hyp.length = L.al_nbest_length(r, k)
            hyp.eos = bool(L.al_nbest_eos(r, k))
            nbest.append(hyp)
        t.nbest = nbest
        t.enc_self = t.dec_self = t.cross = None
        steps, layers, heads, ld = t.steps, L.al_result_layers(r), L.al_result_heads(r), L.al_result_ld(r)
        cross = L.al_result_cross(r)
        if cross:
            if layers:
                enc = L.al_result_enc_self(r)
                t.enc_self = _capi.floats(enc, layers * heads * S * S).reshape(layers, heads, S, S)
                dec = _capi.floats(L.al_result_dec_self(r), layers * ld * heads * ld)
                t.dec_self = np.ascontiguousarray(
                    dec.reshape(layers, ld, heads, ld)[:, :steps, :, :steps])
                cr = _capi.floats(cross, layers * ld * heads * S)
                t.cross = np.ascontiguousarray(cr.reshape(layers, ld, heads, S)[:, :steps])
            else:
                cr = _capi.floats(cross, ld * S)
                t.cross = np.ascontiguousarray(cr.reshape(ld, S)[:steps])
        return t

    def _tgt_token(self, i: int) -> str:
        return self._tgt[i] if 0 <= i < len(self._tgt) else ""

    def __repr__(self) -> str:
        state = " (closed)" if self.closed else ""
        return (f"<attnlite.Translator{state} {self.model.kind} max_batch={self.max_batch} "
                f"max_beam={self.max_beam} device={self.device}"
                + (f" precision={self.precision}>" if self.precision != "fp32" else ">"))
