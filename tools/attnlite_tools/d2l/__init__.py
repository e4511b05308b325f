"""Reference re-implementation of the attention chapter of d2l.ai (v0.17, PyTorch).

The modules follow the book's code line for line, so that their state_dict() names,
numerics and quirks are exactly those of the book.  attnlite's C++ code is tested against
tensors produced by these modules (tools/make_fixtures.py).

    from attnlite_tools import d2l
    net = d2l.make_transformer(len(src_vocab), len(tgt_vocab))

One namespace, as the book's `d2l` package, over one module per section:
    attention        masked softmax, additive / dot-product / multi-head attention,
                     positional encodings (10.3, 10.5, 10.6)
    seq2seq          encoder-decoder interfaces, RNN encoders, Bahdanau decoder (9.6, 9.7, 10.4)
    transformer      the Transformer (10.7)
    nadaraya_watson  kernel regression (10.2)
    data             the English-French data set (9.5)
    train            training loop, the book's greedy predict_seq2seq and bleu (9.7)

One deliberate extension, off by default: TransformerDecoder(positions_from_cache=True)
adds the positional encoding of the *absolute* step when decoding one token at a time
(step t gets P[:, t], the position it had during teacher-forced training).  The book's
behaviour (every single-token step gets P[:, 0]) stays the default and is what
`d2l_compat` refers to elsewhere in the project.
"""
from .attention import *  # noqa: F401,F403
from .data import *  # noqa: F401,F403
from .nadaraya_watson import *  # noqa: F401,F403
from .seq2seq import *  # noqa: F401,F403
from .train import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
