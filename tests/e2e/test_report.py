"""gpuopt report on real try results: a self-contained HTML page (no
script, nothing fetched) rendered by a real headless Chromium — its printed
text and a laptop-width screenshot are checked, and its console must be
clean — and Markdown for a PR comment."""
import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from conftest import ROOT, run

PY = "/usr/bin/python3"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    d = tmp_path_factory.mktemp("rep") / "proj"
    shutil.copytree(ROOT / "tests" / "e2e" / "projects" / "norms", d)
    (d / "gpuopt.toml").write_text(
        f'baseline = "{PY} norms.py 120000"\noutputs = ["norms.npy"]\n'
        f'candidates = [{{name = "vectorized", command = "{PY} norms_fast.py 120000"}}, '
        f'{{name = "float16", command = "{PY} norms_wrong.py 120000"}}]\nmin_runs = 8\nmax_time = 6\n')
    r = run("try", "--python", PY, "-q", cwd=d, timeout=300)
    assert r.rc == 0, r
    return d / "gpuopt-try"


def test_html_is_self_contained(results):
    r = run("report", results)
    assert r.rc == 0 and r.out == f"wrote {results}/report.html\n", r
    html = (results / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html.lower()
    for attr in ("src=", "href=", "url("):
        assert attr not in html, attr  # nothing is fetched: no external (or any) resource
    assert "default-src 'none'" in html
    assert html.count("<svg") == 2  # the speedup forest and one strip plot (float16 was not benchmarked)


def test_markdown(results, tmp_path):
    out = tmp_path / "r.md"
    r = run("report", "--format", "markdown", "-o", out, results)
    assert r.rc == 0, r
    md = out.read_text()
    assert md.startswith("## gpuopt try: `/usr/bin/python3 norms.py 120000`")
    assert "| vectorized | **keep** |" in md
    assert "| float16 | **reject** | wrong output |" in md
    assert "CPU code: norms_fast.py imports no GPU library." in md  # why it was not traced
    assert "<svg" not in md
    r = run("report", "-f", "markdown", "-o", "-", results)
    assert r.rc == 0 and r.out == md


def png_size_and_colours(path):
    """Width, height and the number of distinct colours in a sample of rows
    of an 8-bit RGB(A) PNG (Chromium writes those), read with zlib."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    w = h = depth = ctype = 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp + 1
    colours = set()
    prev = bytearray(w * bpp)
    for y in range(h):
        line = raw[y * stride:(y + 1) * stride]
        f, cur = line[0], bytearray(line[1:])
        for i in range(len(cur)):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                cur[i] = (cur[i] + a) & 255
            elif f == 2:
                cur[i] = (cur[i] + b) & 255
            elif f == 3:
                cur[i] = (cur[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 7 == 0:
            for x in range(0, w, 3):
                colours.add(bytes(cur[x * bpp:x * bpp + 3]))
        prev = cur
    return w, h, len(colours)


def chromium(*args, tmp):
    env = dict(os.environ, HOME=str(tmp))
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--enable-logging=stderr", "--v=0", f"--user-data-dir={tmp}/profile", *args],
                          capture_output=True, text=True, timeout=120, env=env)


def test_rendered_in_chromium(results, tmp_path):
    assert CHROMIUM, "chromium is not installed (scripts/setup.sh installs Debian's chromium)"
    assert shutil.which("pdftotext"), "pdftotext is not installed (poppler-utils)"
    assert run("report", results).rc == 0
    url = (results / "report.html").as_uri()
    # the page as printed: what a reader sees, text and plot labels included
    pdf = tmp_path / "r.pdf"
    p = chromium(f"--print-to-pdf={pdf}", "--no-pdf-header-footer", url, tmp=tmp_path)
    assert pdf.exists() and pdf.stat().st_size > 10000, p.stderr
    # nothing failed to load, nothing was refused, no script error
    bad = [l for l in p.stderr.splitlines()
           if "CONSOLE" in l or "Refused to" in l or "Failed to load" in l or "net::ERR" in l]
    assert not bad, bad
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True).stdout
    flat = " ".join(text.split())
    assert "gpuopt try: /usr/bin/python3 norms.py 120000" in flat
    assert "Keep vectorized: it computes the same outputs as the baseline" in flat
    assert "wrong output" in flat and "reject" in flat and "keep" in flat
    assert "speedup (baseline time / candidate time), log scale" in flat  # the forest plot's axis
    assert "wall time per run" in flat                                     # the strip plot's axis
    assert "Verification against the baseline's outputs" in flat
    # a screenshot at laptop width: the page fills it, in colour (plots, badges)
    shot = tmp_path / "r.png"
    p = chromium(f"--screenshot={shot}", "--window-size=1366,900", "--hide-scrollbars", url, tmp=tmp_path)
    assert shot.exists(), p.stderr
    w, h, colours = png_size_and_colours(shot)
    assert (w, h) == (1366, 900)
    assert colours > 40  # text, badges and dots, not a blank page


def test_not_results(tmp_path):
    r = run("report", tmp_path)
    assert r.rc == 2 and "holds no gpuopt try results" in r.err, r
    r = run("report")
    assert r.rc == 2 and "give one RESULTS_DIR" in r.err
    r = run("report", "-f", "pdf", tmp_path)
    assert r.rc == 2 and "'pdf' is not html or markdown" in r.err


def test_incomplete_results_say_so(results, tmp_path):
    d = tmp_path / "partial"
    shutil.copytree(results, d)
    (d / "verdict.json").unlink()
    (d / "candidate-2.json").unlink()
    json.loads((d / "candidate-1.json").read_text())
    r = run("report", "-f", "markdown", "-o", "-", d)
    assert r.rc == 0, r
    assert "These results are incomplete: gpuopt try did not finish" in r.out


@pytest.mark.parametrize("name, want", [
    ("diffusion", ["Keep cupy twin: it computes the same outputs as the baseline and is 3.44x as fast.",
                   "| cupy, NaN check on the host | **revise** | transfers |",
                   "sync-bound at diffusion_cupy_check.py:21 (main)",
                   "| cupy in float32 | **reject** | wrong output |"]),
    ("diffusion-small", ["| cupy twin, 96 x 96 | **reject** | problem size |",
                         "its GPU work spans 10.0 ms of its 1.15 s"]),
    ("spectra", ["No candidate is kept", "| torch twin | **reject** | problem size |"]),
])
def test_results_recorded_on_the_h200(tmp_path, name, want):
    """The try results recorded on the H200 (examples/try/results) render,
    traces included, and say what was found there."""
    d = tmp_path / name
    shutil.copytree(ROOT / "examples" / "try" / "results" / name, d)
    r = run("report", "-f", "markdown", "-o", "-", d)
    assert r.rc == 0, r
    for w in want:
        assert w in r.out, w
    r = run("report", d)
    assert r.rc == 0, r
    html = (d / "report.html").read_text()
    if name == "diffusion":
        assert "Trace of one separate run (gpuopt trace)" in html and "sync-bound" in html
