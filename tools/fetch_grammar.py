#!/usr/bin/env python3
"""Fetch the tree-sitter Python grammar's C sources from PyPI, checked by hash.

Reads third_party/tree-sitter-python.lock.json: the source distributions to
take files from (project, file name, sha256) and, for each, the members to
keep (their destination and sha256). Each archive is found through the
package index's simple API (PIP_INDEX_URL, else https://pypi.org/simple),
downloaded once into third_party/.downloads/, and refused unless its sha256
matches; each extracted file is checked again. The destination directory is
replaced whole or not at all. Standard library only: it runs before anything
is installed from PyPI.

Exit codes: 0 the sources are in place, 1 they could not be fetched or did
not match (the message says which file and why), 2 a bad lock file.
"""

import hashlib
import html.parser
import io
import json
import os
import shutil
import ssl
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOCK = os.path.join(ROOT, "third_party", "tree-sitter-python.lock.json")
DOWNLOADS = os.path.join(ROOT, "third_party", ".downloads")
STAMP = ".fetched-from.json"


def die(msg, code=1):
    print(f"fetch_grammar: {msg}", file=sys.stderr)
    sys.exit(code)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def ssl_context():
    cafile = os.environ.get("SSL_CERT_FILE") or os.environ.get("PIP_CERT")
    if cafile and os.path.isfile(cafile):
        return ssl.create_default_context(cafile=cafile)
    return ssl.create_default_context()


def get(url, what):
    """Return the body of url, retrying twice; die naming what on failure."""
    last = None
    for attempt in range(3):
        try:
            with urllib.request.urlopen(url, timeout=60, context=ssl_context()) as r:
                return r.read()
        except (urllib.error.URLError, OSError) as e:
            last = e
            time.sleep(1 + attempt)
    die(f"cannot download {what} from {url}: {last}")


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs += [v for k, v in attrs if k == "href" and v]


def find_url(project, filename):
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    page_url = f"{index}/{project}/"
    page = get(page_url, f"the index page of {project}").decode("utf-8", "replace")
    links = Links()
    links.feed(page)
    for href in links.hrefs:
        url = urllib.parse.urljoin(page_url, href)
        if urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1] == filename:
            return url.split("#", 1)[0]
    die(f"{filename} is not listed on {page_url}")


def archive(sd):
    """The verified bytes of one source distribution (cached on disk)."""
    path = os.path.join(DOWNLOADS, sd["filename"])
    if os.path.isfile(path):
        with open(path, "rb") as f:
            data = f.read()
        if sha256(data) == sd["sha256"]:
            return data
    data = get(find_url(sd["project"], sd["filename"]), sd["filename"])
    got = sha256(data)
    if got != sd["sha256"]:
        die(f"{sd['filename']}: sha256 {got} is not the pinned {sd['sha256']}")
    os.makedirs(DOWNLOADS, exist_ok=True)
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return data


def in_place(dest, lock):
    try:
        with open(os.path.join(dest, STAMP)) as f:
            return json.load(f) == lock
    except (OSError, ValueError):
        return False


def main():
    try:
        with open(LOCK) as f:
            lock = json.load(f)
        dest = os.path.join(ROOT, lock["dest"])
        sdists = lock["sdists"]
    except (OSError, ValueError, KeyError) as e:
        die(f"cannot read {LOCK}: {e}", 2)
    if in_place(dest, lock):
        return
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    stage = tempfile.mkdtemp(prefix=".grammar-", dir=os.path.dirname(dest))
    try:
        for sd in sdists:
            data = archive(sd)
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                for member, (target, want) in sd["files"].items():
                    try:
                        body = tar.extractfile(member).read()
                    except (KeyError, AttributeError):
                        die(f"{sd['filename']} has no {member}")
                    if want is not None and sha256(body) != want:
                        die(f"{member} in {sd['filename']}: sha256 {sha256(body)} is not the pinned {want}")
                    out = os.path.join(stage, target)
                    os.makedirs(os.path.dirname(out), exist_ok=True)
                    with open(out, "wb") as f:
                        f.write(body)
        with open(os.path.join(stage, STAMP), "w") as f:
            json.dump(lock, f, indent=1)
        old = dest + ".old"
        shutil.rmtree(old, ignore_errors=True)
        if os.path.exists(dest):
            os.rename(dest, old)
        os.rename(stage, dest)
        shutil.rmtree(old, ignore_errors=True)
        print(f"tree-sitter-python {lock['version']} grammar sources in {os.path.relpath(dest, ROOT)}")
    finally:
        shutil.rmtree(stage, ignore_errors=True)


if __name__ == "__main__":
    main()
