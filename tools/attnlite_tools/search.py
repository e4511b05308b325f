"""Greedy and beam search over the d2l reference modules: the definitions attnlite follows.

greedy_decode is the batched greedy loop (the book's predict_seq2seq, d2l.train, is the
one-sentence form); beam_search is the definition attnlite's beam search follows:

    from attnlite_tools.search import beam_search
    res = beam_search(net, "i'm home .", src_vocab, tgt_vocab, num_steps, beam_size=4, alpha=0.75)
    res["nbest"][0]["tokens"]   # the best hypothesis

The source is handled exactly as the book's predict_seq2seq (lower().split(' ') + <eos>,
valid length counted before truncate/pad to num_steps).  The decoder state is the book's:
for the Transformer, state[2][i] holds the concatenated inputs of block i per hypothesis
(reordered with index_select when beams are selected); for the Bahdanau GRU, the hidden
state (num_layers, K, num_hiddens) is reordered along its batch axis.

Semantics (attnlite/translate.h states the same):
  * One sentence; K = beam_size hypotheses are decoder batch rows.  Step 0 has a single
    live hypothesis (<bos>, log-probability 0); the K rows all start from <bos> and only
    row 0's candidates are considered.
  * At each step every live hypothesis h is extended by every token v with
    log_softmax(logits[h]) computed in float64; a candidate's raw score is the parent's
    score + logp[h, v] (float64 sums).
  * Candidates are ranked by raw score, descending; ties by lower h, then lower v.
    Walking that ranking: a candidate ending in <eos> whose rank is below K is finished
    (its length counts the generated tokens including <eos>) and appended to the finished
    list; <eos> candidates at rank >= K are dropped; the other candidates become the new
    live hypotheses, in ranking order, until there are K of them.
  * Stop after max_steps steps, or at the first step whose K best candidates all end in
    <eos> (then no live hypothesis remains).  After max_steps, the K live hypotheses are
    appended to the finished list, in beam order, with length = number of tokens.
  * Final score = logp / length ** alpha (alpha = 0: the raw logp).  The finished list is
    sorted by score, descending, ties by the order of finishing; the first K form the
    n-best list, the first of them is the translation.
With beam_size 1 this is greedy decoding: the tokens of predict_seq2seq.
"""
import torch

from . import d2l


def greedy_decode(net, src, src_valid_len, bos, steps, eos=None, on_step=None):
    """Batched greedy decoding: the encoder once, then one decoder call per step on the
    previous step's argmax (the book's state: TransformerDecoder.positions_from_cache
    decides the positions).  src (B, S) int64, src_valid_len (B,).  Runs `steps` steps,
    or fewer when eos is given and every row has produced it.  on_step(t, Y) sees each
    step's decoder output Y (B, 1, V), after the call (the decoder's attention_weights
    are that step's).  Returns the (B, steps run) int64 argmax tokens, <eos> included."""
    B = src.shape[0]
    enc_outputs = net.encoder(src, src_valid_len)
    state = net.decoder.init_state(enc_outputs, src_valid_len)
    dec_X = torch.full((B, 1), bos, dtype=torch.int64, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    toks = []
    for t in range(steps):
        Y, state = net.decoder(dec_X, state)
        dec_X = Y.argmax(dim=2)
        toks.append(dec_X[:, 0])
        if on_step is not None:
            on_step(t, Y)
        if eos is not None:
            done |= dec_X[:, 0] == eos
            if bool(done.all()):
                break
    return torch.stack(toks, 1)


def strip_eos(tokens, eos):
    """Each row of greedy_decode's tokens up to its first <eos> (excluded), as lists."""
    out = []
    for row in tokens.tolist():
        out.append(row[:row.index(eos)] if eos in row else row)
    return out


def _encode(net, src_sentence, src_vocab, num_steps, K):
    """The book's encoder call, then the decoder state expanded to K rows."""
    src_tokens = src_vocab[src_sentence.lower().split(' ')] + [src_vocab['<eos>']]
    enc_valid_len = torch.tensor([len(src_tokens)])
    src_tokens = d2l.truncate_pad(src_tokens, num_steps, src_vocab['<pad>'])
    enc_X = torch.tensor(src_tokens, dtype=torch.long)[None]
    enc_outputs = net.encoder(enc_X, enc_valid_len)
    state = net.decoder.init_state(enc_outputs, enc_valid_len)
    rows = torch.zeros(K, dtype=torch.long)
    if isinstance(net.decoder, d2l.TransformerDecoder):
        return [state[0].index_select(0, rows), state[1].index_select(0, rows), state[2]]
    enc_out, hidden, valid = state
    return [enc_out.index_select(0, rows), hidden.index_select(1, rows),
            valid.index_select(0, rows)]


def _reorder(net, state, parents):
    if isinstance(net.decoder, d2l.TransformerDecoder):
        state[2] = [s.index_select(0, parents) for s in state[2]]
    else:
        state[1] = state[1].index_select(1, parents)
    return state


def _attention(net, K, S):
    """This step's weights per row: (self (L, NH, t+1), cross (L, NH, S)) or (S,)."""
    w = net.decoder.attention_weights
    if isinstance(net.decoder, d2l.TransformerDecoder):
        L = len(w[0])
        NH = w[1][0].shape[0] // K
        self_w = torch.stack([w[0][l].reshape(K, NH, -1) for l in range(L)], 1)
        cross_w = torch.stack([w[1][l].reshape(K, NH, S) for l in range(L)], 1)
        return self_w, cross_w
    return w[0].reshape(K, S)


def beam_search(net, src_sentence, src_vocab, tgt_vocab, num_steps, beam_size, alpha=0.0,
                max_steps=None, attention=True):
    """Returns dict(nbest=[...], finished=[...], stats=...).

    Each hypothesis: tokens (ids without <eos>), probs (softmax probability of each token),
    logp (float64 sum including <eos>), length, eos, score, and when attention=True its
    weights at every step: Transformer dec_self (L, steps, NH, steps) and cross
    (L, steps, NH, S); Bahdanau attn (steps, S).
    stats: the smallest float64 gap at every ranking boundary that decided the result.
    """
    net.eval()
    K = beam_size
    T = max_steps or num_steps
    eos, bos = tgt_vocab['<eos>'], tgt_vocab['<bos>']
    transformer = isinstance(net.decoder, d2l.TransformerDecoder)
    S = num_steps
    with torch.no_grad():
        state = _encode(net, src_sentence, src_vocab, num_steps, K)
        dec_X = torch.full((K, 1), bos, dtype=torch.long)
        live = [dict(tokens=[], probs=[], logp=0.0)]
        hist = None  # per row: list over steps of that step's weights
        finished = []
        min_gap = float("inf")
        for t in range(T):
            Y, state = net.decoder(dec_X, state)
            logp = torch.log_softmax(Y[:, -1].double(), dim=-1)
            if attention:
                step_w = _attention(net, K, S)
                hist = [[] for _ in range(K)] if hist is None else hist
                for j in range(K):
                    hist[j].append(tuple(x[j].clone() for x in step_w) if transformer
                                   else step_w[j].clone())
            cands = []
            for h, hyp in enumerate(live):
                row = logp[h].tolist()
                cands += [(hyp["logp"] + row[v], h, v) for v in range(len(row))]
            cands.sort(key=lambda c: (-c[0], c[1], c[2]))
            new_live, all_eos, last = [], True, None
            for rank, (s, h, v) in enumerate(cands):
                if v == eos:
                    if rank < K:
                        finished.append(_hyp(live[h], hist, h, s, t + 1, True))
                    continue
                if rank < K:
                    all_eos = False
                new_live.append((s, h, v))
                last = rank
                if len(new_live) == K:
                    break
            # boundaries: rank K-1 / K, and the last live one / the next candidate
            min_gap = min(min_gap, cands[K - 1][0] - cands[K][0])
            if last is not None and last + 1 < len(cands):
                min_gap = min(min_gap, cands[last][0] - cands[last + 1][0])
            if all_eos:
                live = []
                break
            parents = torch.tensor([h for _, h, _ in new_live], dtype=torch.long)
            live = [dict(tokens=live[h]["tokens"] + [v],
                         probs=live[h]["probs"] + [float(torch.exp(logp[h, v]))], logp=s)
                    for s, h, v in new_live]
            if attention:
                hist = [list(hist[h]) for h in parents.tolist()]
            state = _reorder(net, state, parents)
            dec_X = torch.tensor([[v] for _, _, v in new_live], dtype=torch.long)
        for j, hyp in enumerate(live):
            finished.append(_hyp(hyp, hist, j, hyp["logp"], len(hyp["tokens"]), False))
    for f in finished:
        f["score"] = f["logp"] / (f["length"] ** alpha) if alpha else f["logp"]
    order = sorted(range(len(finished)), key=lambda i: (-finished[i]["score"], i))
    ranked = [finished[i] for i in order]
    for a, b in zip(ranked[:K], ranked[1:K + 1]):
        min_gap = min(min_gap, a["score"] - b["score"])
    nbest = ranked[:K]
    if attention:
        for f in nbest:
            _stack_attention(f, transformer)
    return dict(nbest=nbest, finished=finished, min_gap=min_gap)


def _hyp(live, hist, row, logp, length, eos):
    """A finished hypothesis from live hypothesis `live` whose history is row `row`."""
    h = dict(tokens=list(live["tokens"]), probs=list(live["probs"]), logp=logp,
             length=length, eos=eos, score=0.0)
    if hist is not None:
        h["hist"] = list(hist[row])
    return h


def _stack_attention(f, transformer):
    steps = len(f["hist"])
    if not transformer:
        f["attn"] = torch.stack(f["hist"], 0)
        return
    L, NH, _ = f["hist"][0][0].shape
    S = f["hist"][0][1].shape[-1]
    ds = torch.zeros(L, steps, NH, steps)
    cr = torch.zeros(L, steps, NH, S)
    for t, (sw, cw) in enumerate(f["hist"]):
        ds[:, t, :, :t + 1] = sw
        cr[:, t] = cw
    f["dec_self"], f["cross"] = ds, cr
