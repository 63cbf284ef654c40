#!/usr/bin/env python3
"""Brings the files of the labelled GPU corpus (corpus.json) to a local
folder, each pinned by the commit corpus.json names, so that score.py scans
exactly the code the labels were made on.

The files come from git snapshots of the public repositories under MIRRORS
(default /work/.mirror, where a session's `fetch` tool puts them: one
OWNER+NAME/repo git directory per repository), read with `git show
COMMIT:PATH`. Nothing is fetched from the network, and the third-party files
are never committed: they land in DEST (default files/ beside this script,
ignored by git).

Usage: fetch.py [--mirrors DIR] [--dest DIR] [--corpus FILE]
(--corpus: another corpus file of the same form, e.g. ../scan_coverage/corpus.json;
--dest then defaults to files/ beside it)
Exit codes: 0 all files there, 2 a repository or a file could not be had
(the message names it and what to do)."""
import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_corpus(path=None):
    return json.loads(Path(path or HERE / "corpus.json").read_text())


def repo_dir(mirrors, repo):
    return Path(mirrors) / repo.replace("/", "+") / "repo"


def fetch(mirrors, dest, corpus_path=None):
    corpus = load_corpus(corpus_path)
    problems = []
    count = 0
    for unit in corpus["repos"]:
        repo, commit = unit["repo"], unit["commit"]
        git = repo_dir(mirrors, repo)
        if not git.is_dir():
            problems.append(f"{repo}: no snapshot at {git} (bring it with the session's fetch tool: github:{repo})")
            continue
        for path in unit["files"]:
            out = Path(dest) / repo.replace("/", "+") / path
            proc = subprocess.run(["git", "-C", str(git), "show", f"{commit}:{path}"], capture_output=True)
            if proc.returncode != 0:
                problems.append(f"{repo}: {path} at {commit[:12]}: {proc.stderr.decode().strip()}")
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            if not out.exists() or out.read_bytes() != proc.stdout:
                out.write_bytes(proc.stdout)
            count += 1
    for p in problems:
        print(f"fetch.py: {p}", file=sys.stderr)
    print(f"{count} files in {dest}")
    return 2 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--dest")
    ap.add_argument("--corpus")
    a = ap.parse_args()
    dest = a.dest or str(Path(a.corpus).resolve().parent / "files" if a.corpus else HERE / "files")
    sys.exit(fetch(a.mirrors, dest, a.corpus))


if __name__ == "__main__":
    main()
