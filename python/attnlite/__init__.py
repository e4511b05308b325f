"""attnlite: the attention models of d2l.ai chapter 10 (translators, a decoder-only language
model, a Vision Transformer) run by the attnlite C++ runtime, from Python.

The package calls the library's C API (``include/attnlite/c_api.h``) through ctypes; every
number comes from the same code as the ``attnlite`` command line.

Classes:

* :class:`Model` -- a model file: ``Model.load("transformer-d2l")`` or a path.
* :class:`Translator` -- English to French: ``Translator(model).translate("i'm home .")``,
  with beam search and the attention weights as NumPy arrays.
* :class:`Generator` -- French text from the language model, and its perplexity.
* :class:`Classifier` -- which digit an image shows, with the Vision Transformer.
* :func:`heatmap` -- a translation's attention maps as ``attnlite heatmap translate`` draws
  them (also :meth:`Translator.heatmap`): a :class:`Figure`, the PNG or SVG file's bytes,
  shown inline by Jupyter.
* :func:`split_sentences` -- a text cut into sentences; :meth:`Model.sentences` -- those
  a model translates one at a time, as the command line cuts a text.
* :class:`Error` -- every failure the library reports, with its message.
* :func:`export` -- writes a PyTorch model built with the book's code (the Transformer, the
  Bahdanau seq2seq, the language model, the ViT) as a model file ``Model.load`` reads.

:mod:`attnlite.dask` (imported only on ``import attnlite.dask``; needs Dask distributed)
translates a text file on a Dask cluster: ``translate_file(client, model, src, out)``.

Every object holding a C handle has ``close()`` and works as a context manager; a closed
object raises :class:`Error`. Results (:class:`Translation`, :class:`Generation`,
:class:`Classification`) are plain Python copies and stay valid.

The library is ``$ATTNLITE_LIBRARY`` when set, else ``attnlite/_lib/libattnlite_c.so``
(``python/build.sh`` puts it there), else ``build/python/libattnlite_c.so`` of the source
tree: see :func:`library_path`.
"""

from ._capi import Error, library_path
from .classifier import Classification, Classifier, digit_from_image
from .export import export
from .figure import Figure, heatmap
from .generator import Generation, Generator, Perplexity
from .model import Model, models_dir, resolve_model, split_sentences, tokenize
from .translator import Hypothesis, Translation, Translator

__version__ = "0.1.0"

__all__ = [
    "Classification",
    "Classifier",
    "Error",
    "Figure",
    "Generation",
    "Generator",
    "Hypothesis",
    "Model",
    "Perplexity",
    "Translation",
    "Translator",
    "digit_from_image",
    "export",
    "heatmap",
    "library_path",
    "models_dir",
    "resolve_model",
    "split_sentences",
    "tokenize",
]
