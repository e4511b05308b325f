"""attnlite.heatmap and attnlite.Figure: the attention maps of a translation as the
``attnlite heatmap translate`` command line draws them, as PNG or SVG bytes."""

from __future__ import annotations

import ctypes
import os
from typing import Optional, Union

from . import _capi
from ._capi import decode, encode
from .model import Model

__all__ = ["Figure", "heatmap"]

_FORMATS = ("png", "svg")


class Figure(bytes):
    """An encoded figure: the bytes of a PNG or SVG file, with what describes them.

    A ``Figure`` *is* the file's bytes (a ``bytes`` subclass: ``fig == open("x.png",
    "rb").read()``, ``len(fig)``, ``bytes(fig)``), and Jupyter shows it inline
    (``_repr_png_`` / ``_repr_svg_``). :func:`heatmap` and :meth:`Translator.heatmap
    <attnlite.Translator.heatmap>` return one; ``Figure(data, "png")`` wraps bytes of your own.

    Attributes:
        format: ``"png"`` or ``"svg"``.
        width, height: the image's size in pixels (0 when not given).
        rows, cols: the panels drawn: layers and heads (0 when not given).
        caption: what ``attnlite heatmap`` prints for it ("transformer encoder-decoder
            attention for 'i'm home .' => 'je suis chez moi .'").
        text: the translation drawn.
    """

    format: str
    width: int
    height: int
    rows: int
    cols: int
    caption: str
    text: str

    def __new__(cls, data: Union[bytes, bytearray, memoryview] = b"", format: str = "png", *,
                width: int = 0, height: int = 0, rows: int = 0, cols: int = 0,
                caption: str = "", text: str = "") -> "Figure":
        if isinstance(data, str) or not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"a Figure holds bytes, not {type(data).__name__}")
        if format not in _FORMATS:
            raise ValueError(f"format must be 'png' or 'svg', got {format!r}")
        fig = super().__new__(cls, data)
        fig.format = format
        fig.width, fig.height, fig.rows, fig.cols = width, height, rows, cols
        fig.caption, fig.text = caption, text
        return fig

    @property
    def data(self) -> bytes:
        """The file's bytes as a plain ``bytes``."""
        return bytes(self)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> str:
        """Writes the file (as ``attnlite heatmap --out PATH`` does; the name's extension is
        not checked) and returns its path."""
        p = os.fspath(path)
        with open(p, "wb") as f:
            f.write(self)
        return p

    def _repr_png_(self) -> Optional[bytes]:
        """Jupyter's inline PNG (None for an SVG figure)."""
        return bytes(self) if self.format == "png" else None

    def _repr_svg_(self) -> Optional[str]:
        """Jupyter's inline SVG (None for a PNG figure)."""
        return bytes(self).decode("utf-8") if self.format == "svg" else None

    def __repr__(self) -> str:
        size = f" {self.width}x{self.height}" if self.width else ""
        what = f": {self.caption}" if self.caption else ""
        return f"<attnlite.Figure {self.format}{size}, {len(self)} bytes{what}>"

    def __reduce__(self):
        return (_figure, (bytes(self), self.format, dict(self.__dict__)))


def _figure(data: bytes, format: str, attrs: dict) -> Figure:
    fig = Figure(data, format)
    fig.__dict__.update(attrs)
    return fig


def display_name(source: str) -> Optional[str]:
    """The model as ``attnlite heatmap --model ARG`` names it in titles: the file name
    without ``.safetensors`` (a shipped name resolves to ``<models>/NAME.safetensors``, so it
    is named by NAME); None for a model loaded from bytes."""
    if source == "<bytes>":
        return None
    n = source.rsplit("/", 1)[-1]
    ext = ".safetensors"
    return n[: -len(ext)] if len(n) > len(ext) and n.endswith(ext) else n


def _index(name: str, v: object) -> int:
    """layer / head: None or "all" -> 0 (every one), else a 1-based int."""
    if v is None or v == "all":
        return 0
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"{name} must be a 1-based int, 'all' or None, not {type(v).__name__}")
    if v < 1:
        raise ValueError(f"{name} is 1-based (as `attnlite heatmap --{name}` and the figure's "
                         f"labels): give 1 or more, or None for all, got {v}")
    return v


def heatmap(model: Union[Model, "attnlite.Translator", str, "os.PathLike[str]"], sentence: str, *,
            kind: str = "cross", layer: Union[int, str, None] = None,
            head: Union[int, str, None] = None, cmap: str = "Reds", dpi: int = 100,
            format: str = "png", annotate: bool = False, positions: bool = False,
            padding: bool = False, beam: int = 1, alpha: float = 0.0, d2l_compat: bool = False,
            model_name: Optional[str] = None) -> Figure:
    """Translates ``sentence`` and draws its attention maps, byte for byte the file of
    ``attnlite heatmap translate --model MODEL SENTENCE [options] --out FILE`` (the same
    figure function of the C library, through ``al_figure_translation_map``).

    Args:
        model: a :class:`Model` of kind ``"transformer"`` or ``"bahdanau"``, a
            :class:`Translator` (its model), or a path or shipped name (loaded for this call).
        sentence: the English sentence.
        kind: ``"cross"`` (encoder-decoder attention; the only kind of a Bahdanau model),
            ``"enc"`` (encoder self-attention) or ``"dec-self"`` (decoder self-attention):
            ``--kind``.
        layer, head: one layer / head, 1-based as ``--layer`` / ``--head`` and the figure's
            labels; None (or ``"all"``): every one, a grid of layers x heads.
        cmap: ``"Reds"``, ``"Blues"`` or ``"viridis"`` (``--cmap``).
        dpi: pixels per inch, 20 to 600 (``--dpi``).
        format: ``"png"`` or ``"svg"`` (``--format``; SVG: the PNG's layout with vector
            cells and real text).
        annotate: print each weight in its cell (``--annotate``).
        positions: numeric positions on the axes instead of tokens (``--positions``).
        padding: keep the source's ``<pad>`` positions, as the book's figures (``--padding``).
        beam, alpha: the maps of beam search's best translation (``--beam``, 1 to 64;
            ``--alpha``, 0 to 10); default greedy.
        d2l_compat: the book's position 0 at every decoder step (``--d2l-compat``).
        model_name: the model named in the title; default: as the command line names its
            ``--model`` argument (the file name without ``.safetensors``; the model's kind for
            a model loaded from bytes).

    Returns:
        a :class:`Figure` (the file's bytes; shown inline by Jupyter; ``.save(path)``).

    Raises:
        Error: an option the library refuses (an unknown kind, colormap or format, a dpi,
            beam or alpha out of range, a layer or head the model lacks, a kind a Bahdanau
            model lacks), a sentence it refuses, a model that is no translator, a closed one.
        TypeError, ValueError: arguments of the wrong type, a layer or head below 1.
    """
    if isinstance(getattr(model, "model", None), Model):  # a Translator: its model
        model = model.model
    elif not isinstance(model, Model):
        model = Model.load(model)
    s = encode(sentence, "sentence")
    for name, v in (("dpi", dpi), ("beam", beam)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{name} must be an int, not {type(v).__name__}")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
        raise TypeError(f"alpha must be a number, not {type(alpha).__name__}")
    if model_name is None:
        model_name = display_name(model.source)
    L = _capi.lib()
    o = _capi._FigureOptions()
    L.al_figure_options_default(ctypes.byref(o))
    o.kind = encode(kind, "kind")
    o.layer = _index("layer", layer)
    o.head = _index("head", head)
    o.cmap = encode(cmap, "cmap")
    o.dpi = dpi
    o.format = encode(format, "format")
    o.annotate = 1 if annotate else 0
    o.positions = 1 if positions else 0
    o.padding = 1 if padding else 0
    o.d2l_compat = 1 if d2l_compat else 0
    o.beam_size = beam
    o.length_penalty = float(alpha)
    o.model_name = None if model_name is None else encode(model_name, "model_name")
    with model._lock:  # the al_model stays alive during the call
        h = _capi.construct(L.al_figure_translation_map, model._handle(), s, ctypes.byref(o))
    try:
        data = ctypes.string_at(L.al_figure_data(h), L.al_figure_size(h))
        return Figure(data, decode(L.al_figure_format(h)), width=L.al_figure_width(h),
                      height=L.al_figure_height(h), rows=L.al_figure_rows(h),
                      cols=L.al_figure_cols(h), caption=decode(L.al_figure_caption(h)),
                      text=decode(L.al_figure_text(h)))
    finally:
        L.al_figure_free(h)
