#!/usr/bin/env python3
"""Scores gpuopt's GPU anti-pattern rules (GPU601-GPU605) on the labelled
corpus: precision and recall per rule and for the five together.

labels.tsv holds one row per site, by reading the code: repository, commit,
path, where (LINE, or CELL:LINE in a notebook, as gpuopt reports it), rule,
truth (`yes`: a real problem that the rule should report there; `no`: a
finding there would be wrong) and the reason. Each repository's files are
scanned together (one gpuopt run, so calls between its modules count).

  true positive   a finding at a `yes` site
  false positive  a finding at a `no` site, or at a site with no label (listed
                  by --list: label it)
  false negative  a `yes` site with no finding

Usage: score.py [--binary GPUOPT] [--files DIR] [--list] [--json OUT]
                [--corpus heldout.json [--labels heldout_labels.tsv]]
(--labels defaults to NAME_labels.tsv beside a corpus NAME.json other than corpus.json)
Run fetch.py first. Exit codes: 0 scored, 2 the files or the binary are
missing, or a label is malformed."""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RULES = ["GPU601", "GPU602", "GPU603", "GPU604", "GPU605"]
FIELDS = ["repo", "commit", "path", "where", "rule", "truth", "reason"]


def die(msg):
    print(f"score.py: {msg}", file=sys.stderr)
    sys.exit(2)


def load_labels(corpus, path):
    commits = {u["repo"]: u["commit"] for u in corpus["repos"]}
    files = {(u["repo"], p) for u in corpus["repos"] for p in u["files"]}
    labels = {}
    name = path.name
    with open(path, newline="") as fh:
        rows = csv.DictReader((l for l in fh if not l.startswith("#")), delimiter="\t")
        for n, row in enumerate(rows, 2):
            if set(row) != set(FIELDS) or None in row.values():
                die(f"{name}: row {n}: needs the columns {', '.join(FIELDS)}")
            key = (row["repo"], row["path"], row["where"], row["rule"])
            if (row["repo"], row["path"]) not in files:
                die(f"{name}: row {n}: {row['repo']} {row['path']} is not in the corpus")
            if not commits[row["repo"]].startswith(row["commit"]):
                die(f"{name}: row {n}: commit {row['commit']} is not the one the corpus pins")
            if row["rule"] not in RULES or row["truth"] not in ("yes", "no"):
                die(f"{name}: row {n}: rule must be GPU601-GPU605 and truth yes or no")
            if key in labels:
                die(f"{name}: row {n}: {key} is labelled twice")
            labels[key] = row
    return labels


def scan(binary, files_dir, corpus):
    """The (repo, path, where, rule) of every GPU6xx finding, and the findings."""
    found = {}
    env = dict(os.environ, XDG_CACHE_HOME=tempfile.mkdtemp(prefix="gpuopt-score-"))
    for unit in corpus["repos"]:
        base = Path(files_dir) / unit["repo"].replace("/", "+")
        paths = [str(base / p) for p in unit["files"]]
        missing = [p for p in paths if not Path(p).is_file()]
        if missing:
            die(f"{missing[0]}: missing (run fetch.py first)")
        proc = subprocess.run([binary, "scan", "--format", "json", "--fail-on", "never", "--no-cache", "--", *paths],
                              capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            die(f"gpuopt scan of {unit['repo']} exited {proc.returncode}: {proc.stderr.strip()}")
        for f in json.loads(proc.stdout)["findings"]:
            if f["rule"] not in RULES:
                continue
            rel = os.path.relpath(f["path"], base)
            where = f"{f['cell']}:{f['line']}" if f.get("cell") else str(f["line"])
            found.setdefault((unit["repo"], rel, where, f["rule"]), f)
    return found


def ratio(a, b):
    return a / b if b else float("nan")


def score(labels, found):
    per = {r: defaultdict(int) for r in RULES + ["all"]}
    lists = {"fp": [], "fn": [], "unlabelled": []}
    for key, row in labels.items():
        if row["truth"] == "yes":
            for r in (key[3], "all"):
                per[r]["sites"] += 1
            if key not in found:
                for r in (key[3], "all"):
                    per[r]["fn"] += 1
                lists["fn"].append(row)
    for key, f in found.items():
        row = labels.get(key)
        for r in (key[3], "all"):
            per[r]["found"] += 1
        if row and row["truth"] == "yes":
            for r in (key[3], "all"):
                per[r]["tp"] += 1
        else:
            for r in (key[3], "all"):
                per[r]["fp"] += 1
            (lists["fp"] if row else lists["unlabelled"]).append((key, f, row))
    return per, lists


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=str(ROOT / "build" / "src" / "gpuopt"))
    ap.add_argument("--files", default=str(HERE / "files"))
    ap.add_argument("--list", action="store_true", help="list false positives, misses and unlabelled findings")
    ap.add_argument("--json", help="write the scores to this file")
    ap.add_argument("--corpus", default=str(HERE / "corpus.json"),
                    help="the files (heldout.json: the held-out set)")
    ap.add_argument("--labels", help="their labels (default: labels.tsv for corpus.json; for "
                                     "another corpus NAME.json, NAME_labels.tsv beside it)")
    a = ap.parse_args()
    if not os.access(a.binary, os.X_OK):
        die(f"{a.binary}: not an executable gpuopt")
    corpus_path = Path(a.corpus)
    corpus = json.loads(corpus_path.read_text())
    default_labels = "labels.tsv" if corpus_path.name == "corpus.json" else corpus_path.stem + "_labels.tsv"
    labels = load_labels(corpus, Path(a.labels) if a.labels else corpus_path.parent / default_labels)
    found = scan(a.binary, a.files, corpus)
    per, lists = score(labels, found)
    nfiles = sum(len(u["files"]) for u in corpus["repos"])
    nyes = sum(1 for r in labels.values() if r["truth"] == "yes")
    print(f"corpus: {nfiles} files from {len(corpus['repos'])} repositories; {len(labels)} labelled sites "
          f"({nyes} real problems, {len(labels) - nyes} not); gpuopt {a.binary}")
    print(f"{'rule':<8} {'sites':>6} {'found':>6} {'TP':>5} {'FP':>5} {'FN':>5} {'precision':>10} {'recall':>8}")
    out = {}
    for r in RULES + ["all"]:
        s = per[r]
        p, rc = ratio(s["tp"], s["found"]), ratio(s["tp"], s["sites"])
        out[r] = {"sites": s["sites"], "found": s["found"], "tp": s["tp"], "fp": s["fp"], "fn": s["fn"],
                  "precision": p, "recall": rc}
        print(f"{r:<8} {s['sites']:>6} {s['found']:>6} {s['tp']:>5} {s['fp']:>5} {s['fn']:>5} {p:>10.3f} {rc:>8.3f}")
    if lists["unlabelled"]:
        print(f"{len(lists['unlabelled'])} findings have no label (counted as false positives; --list shows them)")
    if a.list:
        for key, f, row in sorted(lists["fp"], key=lambda x: x[0]):
            print(f"FP  {key[0]}\t{key[1]}:{key[2]}\t{key[3]}\t{row['reason']}")
        for row in sorted(lists["fn"], key=lambda r: (r["repo"], r["path"], r["where"])):
            print(f"FN  {row['repo']}\t{row['path']}:{row['where']}\t{row['rule']}\t{row['reason']}")
        for key, f, _ in sorted(lists["unlabelled"], key=lambda x: x[0]):
            print(f"NEW {key[0]}\t{key[1]}\t{key[2]}\t{key[3]}\t{f['message'][:110]}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
