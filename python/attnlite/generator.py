"""attnlite.Generator: French text from the decoder-only language model."""

from __future__ import annotations

import ctypes
import math
from typing import Iterable, Iterator, NamedTuple, Optional, Union

from . import _capi
from ._capi import Error, decode, encode
from .model import Model

__all__ = ["Generator", "Generation", "Perplexity"]


class Generation:
    """A generated text: a copy of everything the C library returned.

    Attributes:
        prompt: the prompt as given.
        text: the prompt's words and the generated ones, joined by spaces.
        continuation: the generated words only.
        tokens: ``<bos>``, the prompt's tokens, the generated ones (with ``<eos>`` when it
            came): every position the model read or wrote (list of str).
        ids: their ids (list of int).
        probs: the probability of each generated token when it was chosen (NumPy float32,
            ``num_generated``).
        num_prompt: prompt tokens.
        num_generated: generated tokens (with ``<eos>`` when it came).
        num_unknown: prompt words read as ``<unk>``.
        eos: True when generation stopped at ``<eos>``.
        attention: causal self-attention ``(L, NH, P, P)``: ``[layer][head][query][key]``
            over the P positions read (``attention=True``; else None).
    """

    __slots__ = ("prompt", "text", "continuation", "tokens", "ids", "probs", "num_prompt",
                 "num_generated", "num_unknown", "eos", "attention")

    def __repr__(self) -> str:
        return f"Generation({self.text!r})"

    def __str__(self) -> str:
        return self.text


class Perplexity(NamedTuple):
    """The result of :meth:`Generator.perplexity` (``attnlite eval --perplexity --json``)."""

    perplexity: float
    """``exp(nll / tokens)``."""
    nll: float
    """Summed ``-log p`` of every predicted token (float64)."""
    tokens: int
    """Predicted tokens (each sentence's words and its ``<eos>``)."""
    sentences: int
    """Sentences scored."""
    skipped: int
    """Lines skipped: empty, or too long for the model's context."""


class Generator(_capi.Handle):
    """Continues French prompts with a model of kind ``"lm"`` (a decoder-only Transformer):
    the prompt is read in one causal pass, then one token per step over cached keys and
    values, until ``<eos>``, ``max_tokens`` or the end of the context.

    Args:
        model: a :class:`Model` of kind ``"lm"`` (or a path or shipped name, e.g.
            ``"lm-fra"``).
        device: ``"cpu"`` or ``"cuda"``.
        precision: ``"fp32"``, or with ``device="cuda"`` ``"bf16"``: the linear layers'
            matrices held in bfloat16 on the GPU (sums still in fp32). Tokens may differ from
            fp32's where two candidates are close.

    Results equal ``attnlite generate`` for the same options and seed. A generator belongs to
    one thread at a time (calls from several threads wait for each other).

    Example::

        g = attnlite.Generator(attnlite.Model.load("lm-fra"))
        g.generate("je suis").text                   # greedy
        g.generate("je suis", seed=3).text           # sampled, reproducible
        g.perplexity(["je suis content .", "il est là ."]).perplexity
    """

    _free = "al_generator_free"
    _what = "generator"

    def __init__(self, model: Union[Model, str], device: str = "cpu", precision: str = "fp32") -> None:
        """Makes a generator with its own buffers; see ``help(attnlite.Generator)``."""
        super().__init__()
        self._streaming = False
        if not isinstance(model, Model):
            model = Model.load(model)
        L = _capi.lib()
        lim = _capi._GeneratorLimits()
        L.al_generator_limits_default(ctypes.byref(lim))
        lim.device = _capi.device_id(device)
        lim.precision = _capi.precision_id(precision, device)
        self.model = model
        """The :class:`Model` it generates with."""
        self.device = device
        """``"cpu"`` or ``"cuda"``."""
        self.precision = precision
        """``"fp32"`` or ``"bf16"``."""
        with model._lock:
            mh = model._handle()
            if model.task != "generate":
                raise Error(f"a Generator needs a language model (kind lm), not {model.kind}")
            self._vocab = model._vocab("tgt")
            self._h = _capi.construct(L.al_generator_new_with, mh, ctypes.byref(lim))
        self.context: int = L.al_generator_context(self._h)
        """Positions the model reads (``<bos>``, prompt and generated tokens)."""

    def _options(self, max_tokens, temperature, top_k, top_p, seed, sample, attention):
        L = _capi.lib()
        o = _capi._GenerateOptions()
        L.al_generate_options_default(ctypes.byref(o))
        sampling = bool(sample)
        if max_tokens is not None:
            if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
                raise TypeError(f"max_tokens must be an int, not {type(max_tokens).__name__}")
            o.max_tokens = max_tokens
        if temperature is not None:
            if not isinstance(temperature, (int, float)) or isinstance(temperature, bool):
                raise TypeError(f"temperature must be a number, not {type(temperature).__name__}")
            o.temperature = float(temperature)
            sampling = True
        if top_k is not None:
            if not isinstance(top_k, int) or isinstance(top_k, bool):
                raise TypeError(f"top_k must be an int, not {type(top_k).__name__}")
            o.top_k = top_k
            sampling = True
        if top_p is not None:
            if not isinstance(top_p, (int, float)) or isinstance(top_p, bool):
                raise TypeError(f"top_p must be a number, not {type(top_p).__name__}")
            o.top_p = float(top_p)
            sampling = True
        if seed is not None:
            if not isinstance(seed, int) or isinstance(seed, bool):
                raise TypeError(f"seed must be an int, not {type(seed).__name__}")
            if not 0 <= seed < 2 ** 64:
                raise ValueError("seed must be in [0, 2**64)")
            o.seed = seed
            sampling = True
        o.sample = 1 if sampling else 0
        o.attention = 1 if attention else 0
        return o

    def generate(self, prompt: str, max_tokens: Optional[int] = None,
                 temperature: Optional[float] = None, top_k: Optional[int] = None,
                 top_p: Optional[float] = None, seed: Optional[int] = None,
                 sample: bool = False, attention: bool = False) -> Generation:
        """Continues ``prompt`` (French, preprocessed as the book does).

        Decoding is greedy unless ``sample`` is True or one of ``temperature``, ``top_k``,
        ``top_p``, ``seed`` is given (as with ``attnlite generate``); sampling draws from a
        SplitMix64 generator seeded with ``seed`` (default 0), so the same seed and options
        give the same text everywhere.

        Args:
            max_tokens: new tokens at most (None: until ``<eos>`` or the context is full).
            temperature: sample from ``softmax(logits / T)``, ``T > 0`` (default 1).
            top_k: sample among the K most likely tokens (``K >= 1``).
            top_p: nucleus sampling, ``0 < P <= 1``.
            seed: the generator's seed, an int in ``[0, 2**64)``.
            sample: sample with the defaults (temperature 1, no cut).
            attention: record the causal self-attention (``Generation.attention``).

        Raises :class:`Error` for options the library refuses (a temperature <= 0 ...).
        """
        p = encode(prompt, "prompt")
        o = self._options(max_tokens, temperature, top_k, top_p, seed, sample, attention)
        L = _capi.lib()
        with self._lock:
            h = self._idle_handle()
            st = L.al_generate(h, p, ctypes.byref(o))
            if st != _capi.AL_OK:
                raise Error(decode(L.al_generator_error(h)) or "generation failed", st)
            return self._generation(L, h, prompt)

    def stream(self, prompt: str, max_tokens: Optional[int] = None,
               temperature: Optional[float] = None, top_k: Optional[int] = None,
               top_p: Optional[float] = None, seed: Optional[int] = None,
               sample: bool = False) -> Iterator[str]:
        """Like :meth:`generate`, one token at a time: yields each generated token as it is
        chosen (``<eos>`` included when it comes); the tokens are those of :meth:`generate`
        with the same options. Until the iteration ends (or the iterator is closed), calls
        on this generator from other threads wait, and from this thread raise
        :class:`Error`."""
        p = encode(prompt, "prompt")
        o = self._options(max_tokens, temperature, top_k, top_p, seed, sample, False)
        L = _capi.lib()
        with self._lock:
            h = self._idle_handle()
            self._streaming = True
            try:
                st = L.al_generator_start(h, p, ctypes.byref(o))
                seen = 0
                while True:
                    if st != _capi.AL_OK:
                        raise Error(decode(L.al_generator_error(h)) or "generation failed", st)
                    n = L.al_generation_num_tokens(h)
                    ids = _capi.ints(L.al_generation_tokens(h), n)
                    first = n - L.al_generation_num_generated(h)
                    new_ids = ids[max(first, seen):]
                    seen = n
                    for i in new_ids:
                        yield self._token(i)
                    h = self._handle()  # closed from this thread meanwhile: Error
                    if L.al_generation_done(h):
                        return
                    st = L.al_generator_step(h)
            finally:
                self._streaming = False

    def _idle_handle(self) -> int:
        """The handle, or Error when closed or when this thread is inside a stream() of this
        generator (which a call in between would derail). The caller holds the lock."""
        h = self._handle()
        if self._streaming:
            raise Error("this generator is streaming: finish or close that iteration first")
        return h

    def _generation(self, L, h: int, prompt: str) -> Generation:
        g = Generation()
        g.prompt = prompt
        g.text = decode(L.al_generation_text(h))
        g.continuation = decode(L.al_generation_continuation(h))
        n = L.al_generation_num_tokens(h)
        g.ids = _capi.ints(L.al_generation_tokens(h), n)
        g.tokens = [self._token(i) for i in g.ids]
        g.num_prompt = L.al_generation_num_prompt(h)
        g.num_generated = L.al_generation_num_generated(h)
        g.num_unknown = L.al_generation_num_unknown(h)
        g.probs = _capi.floats(L.al_generation_probs(h), g.num_generated)
        g.eos = bool(L.al_generation_eos(h))
        g.attention = None
        a = L.al_generation_attention(h)
        if a:
            import numpy as np

            layers, heads = L.al_generation_layers(h), L.al_generation_heads(h)
            ld, pos = L.al_generation_ld(h), L.al_generation_positions(h)
            full = _capi.floats(a, layers * heads * ld * ld).reshape(layers, heads, ld, ld)
            g.attention = np.ascontiguousarray(full[:, :, :pos, :pos])
        return g

    def _token(self, i: int) -> str:
        return self._vocab[i] if 0 <= i < len(self._vocab) else ""

    def perplexity(self, lines: Union[str, Iterable[str]]) -> Perplexity:
        """The model's perplexity on sentences, as ``attnlite eval --perplexity``:
        ``exp(NLL / N)`` with NLL the summed ``-log p`` of the N predicted tokens (each
        sentence's words and its ``<eos>``). ``lines`` is an iterable of sentences (a file
        object works) or one str of lines. Empty lines and lines too long for the context are
        skipped (counted in ``skipped``).

        Raises :class:`Error` when a line is refused (invalid UTF-8) or none could be scored.
        """
        if isinstance(lines, str):
            lines = lines.splitlines()
        elif isinstance(lines, (bytes, bytearray)):
            raise TypeError("lines must be str, not bytes")
        L = _capi.lib()
        nll = ctypes.c_double(0.0)
        tokens = ctypes.c_long(0)
        scored = ctypes.c_int(0)
        sentences = skipped = 0
        with self._lock:
            h = self._idle_handle()
            for lineno, line in enumerate(lines, 1):
                if line.endswith("\n"):
                    line = line[:-1]
                if line.endswith("\r"):
                    line = line[:-1]
                s = encode(line, "line")
                st = L.al_generator_score(h, s, ctypes.byref(nll), ctypes.byref(tokens),
                                          ctypes.byref(scored))
                if st != _capi.AL_OK:
                    raise Error(f"line {lineno}: " + (decode(L.al_generator_error(h)) or "scoring failed"), st)
                if scored.value:
                    sentences += 1
                else:
                    skipped += 1
        if not sentences:
            raise Error("no sentence could be scored")
        return Perplexity(math.exp(nll.value / tokens.value), nll.value, tokens.value, sentences, skipped)

    def __repr__(self) -> str:
        state = " (closed)" if self.closed else ""
        return (f"<attnlite.Generator{state} context={self.context} device={self.device}"
                + (f" precision={self.precision}>" if self.precision != "fp32" else ">"))
