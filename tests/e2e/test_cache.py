"""The scan cache: a re-scan of unchanged files gives the same report from
the cache, a changed file is scanned again, --no-cache neither reads nor
writes, and a damaged entry is only a miss."""
import json
import os
from pathlib import Path

from conftest import run

CODE = "import numpy as np\nimport cupy as cp\nx = np.fft.fft(np.ones(8))\nfor i in range(3):\n    v = cp.ones(3).get()\n"


def scan(path, cache, *extra):
    r = run("scan", "--format", "json", *extra, path, env={"XDG_CACHE_HOME": str(cache)})
    assert r.rc in (0, 1), r
    doc = r.json()
    doc["summary"].pop("seconds")
    return doc


def entries(cache):
    return sorted(p for p in Path(cache).rglob("*") if p.is_file())


def test_rescan_comes_from_the_cache(tmp_path):
    src = tmp_path / "work.py"
    src.write_text(CODE)
    cache = tmp_path / "cache"
    first = scan(src, cache)
    files = entries(cache)
    assert len(files) == 1 and files[0].parts[-3] == run("--version").out.split()[1]
    stamp = files[0].stat().st_mtime_ns
    second = scan(src, cache)
    assert second == first
    assert entries(cache)[0].stat().st_mtime_ns == stamp  # read, not rewritten
    # the text report has its own entries (code frames), and reads them back
    t1 = run("scan", src, env={"XDG_CACHE_HOME": str(cache)}).out
    t2 = run("scan", src, env={"XDG_CACHE_HOME": str(cache)}).out
    assert t1.splitlines()[:-1] == t2.splitlines()[:-1] and "    5 |" in t2


def test_changed_file_is_scanned_again(tmp_path):
    src = tmp_path / "work.py"
    src.write_text(CODE)
    cache = tmp_path / "cache"
    before = scan(src, cache)
    src.write_text(CODE + "np.nanpercentile(x, 5)\n")
    after = scan(src, cache)
    assert len(after["findings"]) == len(before["findings"]) + 1
    assert len(entries(cache)) == 2


def test_no_cache(tmp_path):
    src = tmp_path / "work.py"
    src.write_text(CODE)
    cache = tmp_path / "cache"
    scan(src, cache, "--no-cache")
    assert entries(cache) == []


def test_damaged_entry_is_a_miss(tmp_path):
    src = tmp_path / "work.py"
    src.write_text(CODE)
    cache = tmp_path / "cache"
    first = scan(src, cache)
    (entry,) = entries(cache)
    for damage in (b"", b"GPUOPTC1", entry.read_bytes()[:-3], b"GPUOPTC1" + b"\xff" * 64):
        entry.write_bytes(damage)
        assert scan(src, cache) == first
    # and an unwritable cache directory only costs the cache
    ro = tmp_path / "ro"
    ro.write_text("not a directory")
    assert scan(src, ro) == first
