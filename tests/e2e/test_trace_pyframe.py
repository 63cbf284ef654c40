"""gpuopt trace's frame walker (src/trace/tracer/pyframe.c) against real
CPython interpreters, on the CPU: a real Python process loads the probe
library (tests/tools/pyframe_probe.c, the walker's own code) with ctypes,
which releases the GIL around the call exactly as CuPy and PyTorch do around
driver calls, and the frames it reads must be the ones traceback sees — in
plain functions, methods, generators, coroutines, comprehensions, lambdas,
exec'd code, deep recursion, other threads, files with non-ASCII names and
lines far from the function's first line. Every interpreter found is tested:
/usr/bin/python3 and those of pyenv (3.9-3.13 on the development machines);
3.11 is always there."""
import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BINARY

PROBE = Path(os.environ.get("GPUOPT_PYFRAME_PROBE", BINARY.parent.parent / "tests" / "tools" / "libpyframe_probe.so"))


def interpreters():
    found = {}
    for exe in ["/usr/bin/python3"] + sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))):
        if not os.access(exe, os.X_OK):
            continue
        try:
            v = subprocess.run([exe, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            continue
        if v and tuple(map(int, v.split(".")[:2])) >= (3, 9):
            found.setdefault(exe, v)
    return sorted(found.items(), key=lambda kv: kv[1])


PROGRAM = r'''
import ctypes, sys, threading, traceback, asyncio
lib = ctypes.CDLL(sys.argv[1])
buf = ctypes.create_string_buffer(1 << 16)
results = []

def probe(tag):
    want = [(f.filename, f.lineno, f.name) for f in reversed(traceback.extract_stack())][1:]; lib.gpuopt_pyframe_probe(buf, len(buf))
    lines = buf.value.decode("utf-8").splitlines()
    head = lines[0]
    got = [tuple(l.split("\t")) for l in lines[1:]]
    got = [(f, int(n), fn) for f, fn, n in got][1:]  # the probe's own frame is this function
    results.append((tag, head, got, want))

def plain(): probe("plain")
class K:
    def method(self): probe("method")
    @staticmethod
    def static(): probe("static")
def gen():
    probe("generator")
    yield 1
async def coro():
    probe("coroutine")
def deep(n):
    if n == 0:
        probe("recursion")
        return
    deep(n - 1)
def far():
    x = 0
''' + "    x += 1\n" * 400 + r'''    probe("far-line")

plain(); K().method(); K.static(); list(gen()); asyncio.run(coro()); deep(150); far()
[probe("comprehension") for _ in range(1)]
(lambda: probe("lambda"))()
exec(compile("probe('exec')", "<string>", "exec"))
t = threading.Thread(target=lambda: probe("thread")); t.start(); t.join()
try:
    raise ValueError
except ValueError:
    probe("except")
for tag, head, got, want in results:
    names = [w[2] for w in want]
    ok = [(g[0], g[1]) for g in got] == [(w[0], w[1]) for w in want]
    print(tag, head, "OK" if ok else "DIFF", len(got), len(want))
    if not ok:
        for g, w in zip(got, want):
            print("   got", g, "want", w)
'''


@pytest.fixture(scope="module")
def probe_lib():
    if not PROBE.exists():
        pytest.fail(f"the probe library is not built: {PROBE}")
    return PROBE


@pytest.mark.parametrize("exe,version", interpreters())
def test_frames_match_traceback(probe_lib, tmp_path, exe, version):
    # A non-ASCII file name exercises the UTF-8 conversion of co_filename.
    script = tmp_path / "prøbe_frames.py"
    script.write_text(PROGRAM, encoding="utf-8")
    p = subprocess.run([exe, str(script), str(probe_lib)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) >= 12, p.stdout
    for line in lines:
        if line.startswith("   "):
            continue
        tag, head = line.split()[0], line.split()[1:3]
        assert head == ["ok", version], line
        assert " OK " in line, p.stdout


def test_outside_python_no_frames(probe_lib):
    """A process that is not Python gets no frames and says why (the probe from C)."""
    code = ('#include <dlfcn.h>\n#include <stdio.h>\nint main(int c, char **v) {\n'
            ' void *h = dlopen(v[1], RTLD_NOW); if (!h) return 2;\n'
            ' int (*f)(char *, int) = (int (*)(char *, int))dlsym(h, "gpuopt_pyframe_probe");\n'
            ' char b[4096]; int n = f(b, sizeof b); fputs(b, stdout); return n; }\n')
    src = Path(os.environ.get("TMPDIR", "/tmp")) / f"noprobe_{os.getpid()}.c"
    exe = src.with_suffix("")
    src.write_text(code)
    try:
        subprocess.run(["cc", str(src), "-o", str(exe), "-ldl"], check=True, capture_output=True)
        p = subprocess.run([str(exe), str(probe_lib)], capture_output=True, text=True, timeout=30)
        assert p.returncode == 0
        assert p.stdout.startswith("no not a Python process"), p.stdout
    finally:
        src.unlink(missing_ok=True)
        exe.unlink(missing_ok=True)


def test_every_supported_minor_is_in_the_layout_table():
    table = (Path(__file__).resolve().parents[2] / "src" / "trace" / "tracer" / "pyoffsets.h").read_text()
    for minor in (9, 10, 11, 12, 13):
        assert f"{{3, {minor}, " in table
    assert sys.version_info >= (3, 9)
