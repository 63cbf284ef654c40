"""The scan cache: a re-scan of unchanged files gives the same report from
the cache, a changed file is scanned again, --no-cache neither reads nor
writes, and a damaged entry is only a miss."""
import json
import os
from pathlib import Path

import pytest

from conftest import run

CODE = "import numpy as np\nimport scipy.signal\nx = np.fft.fft(np.ones(8))\nfor i in range(3):\n    v = np.geomspace(1, 3, 3)\n"
# Code that uses a GPU library depends on the other files of its project
# (scan.c), so it is scanned every time, never cached.
GPU_CODE = "import cupy as cp\nfor i in range(30):\n    v = cp.ones(3).get()\n"


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


def test_gpu_code_is_not_cached(tmp_path):
    src = tmp_path / "gpu.py"
    src.write_text(GPU_CODE)
    cache = tmp_path / "cache"
    first = scan(src, cache)
    assert [f["rule"] for f in first["findings"]] == ["GPU601"]
    assert not [p for p in entries(cache) if "index" not in p.name]
    assert scan(src, cache) == first


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
    for damage in (b"", b"GPUOPTC4", entry.read_bytes()[:-3], b"GPUOPTC4" + b"\xff" * 64):
        entry.write_bytes(damage)
        assert scan(src, cache) == first
    # and an unwritable cache directory only costs the cache
    ro = tmp_path / "ro"
    ro.write_text("not a directory")
    assert scan(src, ro) == first


def index_files(cache):
    return [p for p in entries(cache) if p.name.startswith("index-")]


def test_unchanged_file_is_found_by_its_stat(tmp_path):
    # the index remembers each path's stat and entry key, so a re-scan finds
    # an unchanged file without reading it; files younger than two seconds
    # are left out (a write in the same clock tick could go unseen)
    import time
    src = tmp_path / "work.py"
    src.write_text(CODE)
    other = tmp_path / "other.py"
    other.write_text(CODE.replace("fft", "ifft"))
    cache = tmp_path / "cache"
    scan(src, cache)
    assert index_files(cache) == []  # too young to index
    time.sleep(2.2)
    first = scan(src, cache)
    scan(other, cache)
    (index,) = index_files(cache)
    assert index.read_bytes().startswith(b"GPUOPTI3") and str(src).encode() in index.read_bytes()
    # a re-scan that learns nothing leaves the index as it is
    before = index.stat()
    assert scan(src, cache) == first
    after = index.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    # same size, same mtime, other content: the ctime still moves
    st = src.stat()
    changed = CODE.replace("np.fft.fft(np.ones(8))", "np.sort(np.ones(8))   ")
    assert len(changed) == len(CODE)
    src.write_text(changed)
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = scan(src, cache)
    symbols = [f["symbol"] for f in after["findings"]]
    assert "numpy.sort" in symbols and "numpy.fft.fft" not in symbols
    # rewritten for the change, the index still holds the other path
    assert str(other).encode() in index.read_bytes()
    # a damaged index is only a miss
    for damage in (b"", b"GPUOPTI3", index.read_bytes()[:-5], b"GPUOPTI2\xff\xff\xff\x7f"):
        index.write_bytes(damage)
        assert scan(src, cache) == after


def entry_files(cache):
    return [p for p in entries(cache) if not p.name.startswith("index-")]


@pytest.mark.parametrize("found_by", ["stat", "content"])
def test_entry_copied_over_another_is_not_served(tmp_path, found_by):
    # issue 25: an entry is bound to its key inside its checksum, so a valid
    # entry copied (or moved) over another file's name fails its check: a
    # miss, scanned again, not the other file's findings
    import time
    cache = tmp_path / "cache"
    a = tmp_path / "a.py"
    a.write_text(CODE)
    b = tmp_path / "b.py"
    b.write_text("import numpy as np\nimport scipy.signal\ny = np.nanpercentile(np.ones(8), 5)\n")
    time.sleep(2.2)  # old enough for the index of stats
    first_a = scan(a, cache)
    (entry_a,) = entry_files(cache)
    first_b = scan(b, cache)
    (entry_b,) = [p for p in entry_files(cache) if p != entry_a]
    assert first_a["findings"] != first_b["findings"]
    entry_b.write_bytes(entry_a.read_bytes())
    if found_by == "content":  # no index: b is read, hashed and its entry read
        for p in index_files(cache):
            p.unlink()
    else:
        assert index_files(cache)
    assert scan(b, cache) == first_b
    assert entry_b.read_bytes() != entry_a.read_bytes()  # written again, its own
    assert scan(a, cache) == first_a
