#!/usr/bin/env python3
"""How many call sites into the libraries gpuopt covers get a verdict from
`gpuopt scan`, on real notebooks and example galleries (corpus.json).

The call sites are found independently of gpuopt, with Python's ast: every
call of a function or class reached through an import of a covered module
(the "modules" of the knowledge files marked "verdicts": NumPy, pandas,
scikit-learn, SciPy, NetworkX, scikit-image, OpenCV, Faiss and the other
nearest-neighbour libraries) —
`np.mean(x)`, `train_test_split(...)`, `nx.pagerank(G)`; methods of values
(`model.fit`, `df.groupby`) are not counted, they share the verdict of the
call that made the value. A site has a verdict when gpuopt reports a finding
on its line naming that function (any rule but GPU900, which says the
knowledge lacks it). Notebooks: code cells, IPython syntax commented out as
gpuopt does; files that do not parse are skipped (and counted).

Usage: coverage.py [--binary GPUOPT] [--files DIR] [--list N]
Run ../scan_gpu_corpus/fetch.py --corpus corpus.json first.
Exit codes: 0 measured, 2 files or binary missing."""
import argparse
import ast
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def covered_modules():
    mods = set()
    for f in glob.glob(str(ROOT / "data" / "knowledge" / "*.json")):
        d = json.load(open(f))
        if d.get("verdicts"):
            mods.update(d["modules"])
    return mods


def python_of_cell(src):
    """A code cell as Python, line for line: magics and shell lines commented."""
    lines = src.split("\n")
    out = []
    whole = False
    for i, line in enumerate(lines):
        body = line.lstrip()
        if i == 0 and line.startswith("%%"):
            words = line[2:].split()
            whole = not words or words[0] not in ("time", "timeit", "capture", "prun") and not (
                words[0] == "writefile" and words[-1].endswith(".py"))
            out.append("#" + line)
        elif whole:
            out.append("#" + line)
        elif body.startswith(("%", "!", "?")) or body.endswith("?"):
            out.append(line[:len(line) - len(body)] + "#" + body)
        elif re.match(r"^\s*\w+\s*=\s*[%!]", line):
            out.append(re.sub(r"=\s*[%!].*", "= None", line))
        else:
            out.append(line)
    return "\n".join(out)


def units_of(path):
    """[(cell or 0, source)] of a .py file or a notebook."""
    if path.endswith(".ipynb"):
        nb = json.load(open(path))
        cells = nb.get("cells") or nb.get("worksheets", [{}])[0].get("cells", [])
        out = []
        for i, c in enumerate(cells, 1):
            if c.get("cell_type") != "code":
                continue
            src = c.get("source", c.get("input", ""))
            src = "".join(src) if isinstance(src, list) else src
            out.append((i, python_of_cell(src)))
        return out
    return [(0, open(path, encoding="utf-8", errors="replace").read())]


def dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return list(reversed(parts))
    return None


def call_sites(path, mods):
    """[(cell, line, qualname)] of calls into covered modules; None if unparsable."""
    binds = {}
    sites = []
    trees = []
    for cell, src in units_of(path):
        try:
            trees.append((cell, ast.parse(src)))
        except SyntaxError:
            return None
    for cell, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    top = a.name.split(".")[0]
                    if a.asname:
                        binds[a.asname] = a.name
                    else:
                        binds[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    if a.name != "*":
                        binds[a.asname or a.name] = f"{node.module}.{a.name}"
    for cell, tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            parts = dotted(node.func)
            if not parts or parts[0] not in binds:
                continue
            qual = ".".join([binds[parts[0]]] + parts[1:])
            if qual.split(".")[0] not in mods:
                continue
            sites.append((cell, node.lineno, qual))
    return sites


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=str(ROOT / "build" / "src" / "gpuopt"))
    ap.add_argument("--files", default=str(HERE / "files"))
    ap.add_argument("--list", type=int, default=0, help="show the N most frequent names without a verdict")
    a = ap.parse_args()
    if not os.access(a.binary, os.X_OK):
        print(f"coverage.py: {a.binary}: not an executable gpuopt", file=sys.stderr)
        sys.exit(2)
    mods = covered_modules()
    corpus = json.loads((HERE / "corpus.json").read_text())
    env = dict(os.environ, XDG_CACHE_HOME=tempfile.mkdtemp(prefix="gpuopt-cov-"))
    total = with_verdict = unknown = skipped = nfiles = 0
    missing = collections.Counter()
    per_repo = []
    for unit in corpus["repos"]:
        base = Path(a.files) / unit["repo"].replace("/", "+")
        paths = [str(base / p) for p in unit["files"]]
        if any(not Path(p).is_file() for p in paths):
            print(f"coverage.py: files of {unit['repo']} missing (run fetch.py --corpus corpus.json)", file=sys.stderr)
            sys.exit(2)
        proc = subprocess.run([a.binary, "scan", "--format", "json", "--fail-on", "never", "--no-cache", "--", *paths],
                              capture_output=True, text=True, env=env)
        doc = json.loads(proc.stdout)
        have = collections.defaultdict(set)
        for f in doc["findings"]:
            have[(f["path"], f.get("cell") or 0, f["line"])].add((f["symbol"], f["rule"]))
        t = v = u = 0
        for p in paths:
            sites = call_sites(p, mods)
            if sites is None:
                skipped += 1
                continue
            nfiles += 1
            for cell, line, qual in sites:
                t += 1
                got = have.get((p, cell, line), set())
                if any(sym == qual and rule != "GPU900" for sym, rule in got):
                    v += 1
                else:
                    missing[qual] += 1
                    if any(sym == qual for sym, _ in got):
                        u += 1
        per_repo.append((unit["repo"], len(paths), t, v))
        total += t
        with_verdict += v
        unknown += u
    print(f"corpus: {nfiles} files ({skipped} skipped: not Python 3) from {len(corpus['repos'])} repositories; "
          f"gpuopt {a.binary}")
    for repo, nf, t, v in per_repo:
        print(f"  {repo:<40} {nf:>4} files {t:>6} call sites {v / t if t else 0:>8.1%} with a verdict")
    print(f"call sites into covered libraries: {total}; with a verdict: {with_verdict} "
          f"({with_verdict / total:.1%}); reported as unknown to the knowledge (GPU900): {unknown}; "
          f"silent: {total - with_verdict - unknown}")
    if a.list:
        for name, n in missing.most_common(a.list):
            print(f"  {n:>5}  {name}")


if __name__ == "__main__":
    main()
