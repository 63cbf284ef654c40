"""gpuopt trace end to end, on a machine without a GPU (as CI is):

- the paths that do not trace (no GPU, no CUPTI, another tool's injection,
  --strict, a command not found), with the real tracer library loaded into
  real Python processes;
- what the tracer records without CUDA: NVTX ranges from the real nvtx
  package (the ranges cudf.pandas emits), the Python line of each, the log
  lines of cuml.accel and networkx, saving at a crash, at SIGTERM and in a
  process that ends in os._exit, one summary per process;
- the analysis, `trace show`, the JSON report and the Chrome-trace export on
  traces recorded on an H200 (tests/e2e/fixtures/trace, see its README),
  checked against what the programs measured with CUDA events, against the
  timeline itself, and against Holistic Trace Analysis reading the export."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BINARY, ROOT, run

FIX = ROOT / "tests" / "e2e" / "fixtures" / "trace"
PROGRAMS = ROOT / "tests" / "trace_programs"
VENV_PY = ROOT / ".venv" / "bin" / "python"
TRACER = BINARY.parent / "trace" / "libgpuopt_trace.so"
HAS_GPU = os.path.exists("/dev/nvidia0")

no_gpu_only = pytest.mark.skipif(HAS_GPU, reason="these tests are for machines without a GPU")


def venv_python():
    if not VENV_PY.exists():
        pytest.fail(f"{VENV_PY} is missing: scripts/setup.sh installs requirements/*.txt there")
    return str(VENV_PY)


def report(args, **kw):
    r = run("trace", "-q", "--format", "json", *args, **kw)
    return r, (json.loads(r.out) if r.out.strip().startswith("{") else None)


# ---- the command line ----

def test_help_rules_and_usage_errors():
    r = run("trace", "--help")
    assert r.rc == 0 and "gpuopt trace [OPTIONS] [--] COMMAND" in r.out and "--export-trace" in r.out
    r = run("trace", "rules")
    assert r.rc == 0
    for rule in ("transfer-bound", "roundtrip-storm", "pageable-transfer", "sync-bound", "launch-bound",
                 "gpu-starved", "memory-pressure", "cpu-fallback", "roundtrip_min_count"):
        assert rule in r.out
    r = run("trace")
    assert r.rc == 2 and "no command to trace" in r.err
    r = run("trace", "--format", "xml", "--", "true")
    assert r.rc == 2 and "'xml' is not text or json" in r.err
    r = run("trace", "--set", "nonsense=1", "--", "true")
    assert r.rc == 2 and "unknown threshold 'nonsense'" in r.err
    r = run("trace", "--set", "roundtrip_min_count=x", "--", "true")
    assert r.rc == 2 and "not a finite non-negative number" in r.err
    r = run("help", "trace")
    assert r.rc == 0 and "Exit codes" in r.out


def test_command_not_found():
    r = run("trace", "--", "no-such-program-here", "x")
    assert r.rc == 2
    assert "gpuopt: trace: command not found: 'no-such-program-here'" in r.err


def test_cupti_that_is_not_there():
    r = run("trace", "--cupti", "/nonexistent/libcupti.so", "--", "true")
    assert r.rc == 2 and "--cupti '/nonexistent/libcupti.so': No such file or directory" in r.err


@no_gpu_only
def test_no_gpu_runs_the_program_untraced():
    r = run("trace", "--", sys.executable, "-c", "print('the program ran'); raise SystemExit(0)")
    assert r.rc == 1, r
    assert "the program ran" in r.out
    assert "no NVIDIA GPU" in r.err and "without CUDA tracing" in r.err
    assert "not traced" in r.out


@no_gpu_only
def test_strict_refuses_to_run_untraced():
    r = run("trace", "--strict", "--", sys.executable, "-c", "print('the program ran')")
    assert r.rc == 2
    assert "the program ran" not in r.out
    assert "--strict: not running the program untraced" in r.err


def test_another_tools_injection():
    env = {"CUDA_INJECTION64_PATH": "/opt/nvidia/nsight-systems/2025.1/target-linux-x64/libToolsInjection64.so"}
    r = run("trace", "--", sys.executable, "-c", "print('ran')", env=env)
    assert r.rc == 1 and "ran" in r.out
    assert "Nsight Systems's injection is already set" in r.err and "one CUPTI subscriber" in r.err
    r = run("trace", "--strict", "--", sys.executable, "-c", "print('ran')", env=env)
    assert r.rc == 2 and "ran" not in r.out


def test_tracer_library_missing():
    r = run("trace", "--tracer", "/nonexistent/libgpuopt_trace.so", "--", sys.executable, "-c", "print('ran')")
    assert r.rc == 1 and "ran" in r.out
    assert "libgpuopt_trace.so is not installed" in r.err


# ---- the injected tracer, in real processes, without a driver ----

INJECT = ("import ctypes, os\n"
          "lib = ctypes.CDLL(os.environ['CUDA_INJECTION64_PATH'])\n"
          "print('InitializeInjection', lib.InitializeInjection())\n")


@no_gpu_only
def test_tracer_without_a_driver_says_why(tmp_path):
    """What cuInit would do: the driver calls InitializeInjection. Here there is
    no driver, so CUPTI cannot subscribe (or is not even found): the process
    runs on, untraced, and its summary says why."""
    r = run("trace", "-o", tmp_path / "t.json", "--", sys.executable, "-c", INJECT)
    assert "InitializeInjection 1" in r.out, r
    saved = json.loads((tmp_path / "t.json").read_text())
    (p,) = saved["processes"]
    assert p["status"] == "not-traced"
    assert p["python"]["lines"] is True
    if p["cupti"]:
        assert p["error"]["api"] == "cuptiSubscribe" and "cannot subscribe to CUPTI" in p["reason"]
    else:
        assert "libcupti not found" in p["reason"]
    assert "runs untraced" in r.err


@no_gpu_only
def test_tracer_with_a_library_that_is_not_cupti(tmp_path):
    libc = "/lib/x86_64-linux-gnu/libc.so.6" if os.path.exists("/lib/x86_64-linux-gnu/libc.so.6") else "/lib64/libc.so.6"
    r = run("trace", "--cupti", libc, "-o", tmp_path / "t.json", "--", sys.executable, "-c", INJECT)
    (p,) = json.loads((tmp_path / "t.json").read_text())["processes"]
    assert p["status"] == "not-traced"
    assert "is not a usable libcupti" in p["reason"], p["reason"]


@no_gpu_only
def test_strict_stops_a_process_the_tracer_cannot_attach(tmp_path):
    # Without a GPU --strict refuses before running; a process that calls the
    # tracer itself shows the in-process half: it ends with TRACE_STRICT_EXIT.
    env = {"GPUOPT_TRACE_DIR": str(tmp_path), "GPUOPT_TRACE_OPTS": "strict=1",
           "CUDA_INJECTION64_PATH": str(TRACER), "GPUOPT_TRACE_CUPTI": "/nonexistent/libcupti.so"}
    p = subprocess.run([sys.executable, "-c", INJECT], capture_output=True, text=True, env={**os.environ, **env})
    assert p.returncode == 97, p
    assert "--strict: stopping process" in p.stderr
    (summary,) = tmp_path.glob("*.json")
    assert json.loads(summary.read_text())["status"] == "not-traced"


# ---- NVTX, lines and log lines without a GPU ----

@no_gpu_only
def test_cpu_fallback_from_nvtx_ranges_and_log_lines(tmp_path):
    py = venv_python()
    r, rep = report(["-o", tmp_path / "saved.json", "--", py, str(PROGRAMS / "nvtx_fallback.py"), "30", "12"],
                    cwd=PROGRAMS)
    assert r.rc == 1 and rep, r  # ran, but not a CUDA trace
    assert "[cuml.accel]" in r.err  # the program's stdout goes to stderr with --format json
    (f,) = [f for f in rep["findings"] if f["rule"] == "cpu-fallback"]
    assert f["line"].startswith("nvtx_fallback.py:24 (apply_udf)"), f
    assert "cudf.pandas: 12 of 42 calls ran on the CPU (EXECUTE_SLOW ranges" in f["evidence"]
    assert "cuml.accel said 4 calls fell back to the CPU (1 ran on the GPU)" in f["evidence"]
    assert "Ridge.fit: `positive=True` is not supported (3)" in f["evidence"]
    assert "nx-cugraph said 2 calls fell back to the CPU (1 ran on the GPU)" in f["evidence"]
    assert "pagerank: dangling is not supported (1)" in f["evidence"]
    slow = [n for n in rep["nvtx"] if n["name"] == "EXECUTE_SLOW"]
    assert slow and slow[0]["count"] == 12 and slow[0]["domain"] == "cudf_pandas"
    assert slow[0]["ns"] >= 12 * 2_000_000 * 0.9  # each sleeps 2 ms
    # the saved trace gives the same findings
    r2 = run("trace", "show", "--format", "json", tmp_path / "saved.json", cwd=PROGRAMS)
    assert r2.rc == 0
    assert [x["evidence"] for x in json.loads(r2.out)["findings"]] == [x["evidence"] for x in rep["findings"]]


LIB_PROGRAM = """import sys
sys.path.insert(0, sys.argv[1])
import fakelib
for i in range(5):
    fakelib.slow_op()  # the user's line
"""
FAKELIB = """import nvtx
def slow_op():
    with nvtx.annotate("EXECUTE_SLOW", domain="cudf_pandas"):
        pass
def deep_op(depth):  # a library that calls itself before the range: many library frames
    if depth:
        return deep_op(depth - 1)
    with nvtx.annotate("DEEP", domain="test"):
        pass
"""
DEEP_PROGRAM = """import sys
sys.path.insert(0, sys.argv[1])
import fakelib
def user(n):  # under the user's line, 2 or 20 library frames
    fakelib.deep_op(n)
def nest(k):
    return nest(k - 1) if k else (user(2), user(20))
nest(30)
"""


@no_gpu_only
def test_lines_are_charged_outside_installed_libraries(tmp_path):
    """A package installed outside site-packages (pip --target, PYTHONPATH:
    its folder holds a .dist-info) is a library: the range is charged to the
    user's line that called it."""
    root = tmp_path / "installed"
    (root / "fakelib").mkdir(parents=True)
    (root / "fakelib-1.0.dist-info").mkdir()
    (root / "fakelib" / "__init__.py").write_text(FAKELIB)
    (tmp_path / "user.py").write_text(LIB_PROGRAM)
    r, rep = report(["--", venv_python(), str(tmp_path / "user.py"), str(root)], cwd=tmp_path)
    (row,) = [n for n in rep["nvtx"] if n["name"] == "EXECUTE_SLOW"]
    assert row["count"] == 5
    assert row["line"] == "user.py:5 via fakelib/__init__.py:3 slow_op", row
    # the user's frame found below more library frames than the tracer reads first (8)
    (tmp_path / "deep.py").write_text(DEEP_PROGRAM)
    r, rep = report(["--", venv_python(), str(tmp_path / "deep.py"), str(root)], cwd=tmp_path)
    rows = [n for n in rep["nvtx"] if n["name"] == "DEEP"]
    assert [(n["count"], n["line"]) for n in rows] == [(2, "deep.py:5 (user) via fakelib/__init__.py:7 deep_op")], rows


CRASH = """import nvtx, os, signal, sys, time
for i in range(7):
    with nvtx.annotate("step", domain="test"):
        pass
how = sys.argv[1]
if how == "segv":
    import ctypes
    ctypes.string_at(0)
elif how == "term":
    os.kill(os.getpid(), signal.SIGTERM)
elif how == "exit":
    time.sleep(2.6)  # past the tracer's 2 s periodic save
    os._exit(3)
"""


@no_gpu_only
@pytest.mark.parametrize("how,flush,sig", [("segv", "signal", 11), ("term", "signal", 15), ("exit", "periodic", 0)])
def test_a_crashing_program_still_leaves_its_trace(tmp_path, how, flush, sig):
    (tmp_path / "crash.py").write_text(CRASH)
    r, rep = report(["-o", tmp_path / "t.json", "--", venv_python(), str(tmp_path / "crash.py"), how], cwd=tmp_path)
    assert r.rc == (128 + sig if sig else 3), r  # the program's own status, as a shell gives it
    assert rep["exit"]["signal"] == sig
    (p,) = rep["processes"]
    assert p["flush"] == flush and p["signal"] == sig
    assert [n["count"] for n in rep["nvtx"] if n["name"] == "step"] == [7]
    t = run("trace", "show", tmp_path / "t.json")
    assert t.rc == 0
    if flush == "signal":
        assert f"ended by signal {sig}; its trace was saved at the signal" in t.out
    else:
        assert "last periodic save" in t.out


SIGNALLED = """import nvtx, os, signal, subprocess, sys
for i in range(3):
    with nvtx.annotate("step", domain="test"):
        pass
sig = getattr(signal, sys.argv[1])
if sys.argv[2] == "raised":
    signal.raise_signal(sig)
elif sys.argv[2] == "sent":
    os.kill(os.getpid(), sig)
else:  # by another process
    subprocess.run(["kill", "-" + sys.argv[1][3:], str(os.getpid())])
    signal.sigtimedwait([], 5)  # nothing: the signal has ended the process by now
print("carried on after", sys.argv[1], flush=True)
"""

# Every signal whose default action ends a process and that a program can
# catch. SIGINT is Python's own (KeyboardInterrupt, exit 130 by the same rule)
# and SIGPIPE / SIGXFSZ Python ignores: the tracer leaves all three to Python.
FATAL = ["SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGTRAP", "SIGSYS", "SIGTERM", "SIGHUP", "SIGQUIT",
         "SIGALRM", "SIGUSR1", "SIGUSR2", "SIGXCPU", "SIGVTALRM", "SIGPROF"]


@no_gpu_only
@pytest.mark.parametrize("how", ["raised", "sent", "other"])
@pytest.mark.parametrize("name", FATAL)
def test_every_fatal_signal_ends_the_program_as_it_would_untraced(tmp_path, name, how):
    """The tracer saves the trace at the signal, then the program must end by
    it, whether raised, sent to itself or sent by another process (a SIGSEGV
    sent with os.kill once let the program carry on and exit 0), and gpuopt
    trace must exit with the status a shell gives: 128 + the signal."""
    num = int(getattr(signal, name))
    (tmp_path / "sig.py").write_text(SIGNALLED)
    plain = subprocess.run([venv_python(), str(tmp_path / "sig.py"), name, how], capture_output=True, text=True)
    assert plain.returncode == -num, plain  # the same program untraced dies of it
    r, rep = report(["--", venv_python(), str(tmp_path / "sig.py"), name, how], cwd=tmp_path)
    assert "carried on" not in r.err + r.out, r
    assert r.rc == 128 + num, r
    assert rep["exit"]["signal"] == num and rep["exit"]["code"] == -1, rep["exit"]
    (p,) = rep["processes"]
    assert p["flush"] == "signal" and p["signal"] == num, p
    assert [n["count"] for n in rep["nvtx"] if n["name"] == "step"] == [3]


QUIET_THEN_KILLED = """import nvtx, os, signal, time
with nvtx.annotate("start", domain="test"):  # the tracer starts, and saves this soon after
    pass
time.sleep(0.6)
for i in range(7):
    with nvtx.annotate("step", domain="test"):
        pass
time.sleep(1.0)  # quiet, well before the next 2 s periodic save
os.kill(os.getpid(), signal.SIGKILL)
"""


@no_gpu_only
def test_a_process_killed_after_going_quiet_leaves_its_trace(tmp_path):
    """SIGKILL cannot be caught: what is left is the summary the tracer wrote
    when the process went quiet (as a pool worker does between its last task
    and multiprocessing's terminate)."""
    (tmp_path / "quiet.py").write_text(QUIET_THEN_KILLED)
    r, rep = report(["--", venv_python(), str(tmp_path / "quiet.py")], cwd=tmp_path)
    assert r.rc == 128 + 9 and rep["exit"]["signal"] == 9, r
    (p,) = rep["processes"]
    assert p["flush"] == "periodic"
    assert [n["count"] for n in rep["nvtx"] if n["name"] == "step"] == [7]


POOL = """import multiprocessing as mp
def work(i):
    import nvtx
    for _ in range(3):
        with nvtx.annotate("task", domain="test"):
            pass
    return i
if __name__ == "__main__":
    with mp.get_context("spawn").Pool(2) as pool:  # leaving it terminates the workers
        print(sum(pool.map(work, range(4))) + 22)
"""


@no_gpu_only
def test_pool_workers_terminated_after_their_tasks_are_traced(tmp_path):
    (tmp_path / "pool.py").write_text(POOL)
    r, rep = report(["--", venv_python(), str(tmp_path / "pool.py")], cwd=tmp_path)
    assert "28" in r.err, r
    assert len(rep["processes"]) == 2, rep["processes"]
    assert sum(n["count"] for n in rep["nvtx"] if n["name"] == "task") == 12


MULTI = """import multiprocessing as mp
def work(i):
    import nvtx
    for _ in range(3):
        with nvtx.annotate("child", domain="test"):
            pass
if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=work, args=(i,)) for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    print(sum(p.exitcode for p in procs) + 28)
"""


@no_gpu_only
def test_children_are_traced_one_summary_per_process(tmp_path):
    (tmp_path / "multi.py").write_text(MULTI)
    r, rep = report(["--", venv_python(), str(tmp_path / "multi.py")], cwd=tmp_path)
    assert "28" in r.err, r  # the program's output (on stderr with --format json)
    assert len(rep["processes"]) == 2, rep["processes"]
    assert sum(n["count"] for n in rep["nvtx"] if n["name"] == "child") == 6


# ---- saved traces recorded on the H200 ----

def fixture(name):
    return FIX / f"{name}.json"


def show(name, *args):
    r = run("trace", "show", "--format", "json", *args, fixture(name))
    assert r.rc == 0, r
    return json.loads(r.out)


# (rule, line of the program) that each program's trace must show; see the
# fixtures' README for the two whose recorded expectation differs.
EXPECTED = {
    "cupy_roundtrip": [("roundtrip-storm", 10)],
    "cupy_pageable": [("pageable-transfer", 19)],
    "cupy_tiny_kernels": [("launch-bound", 9)],
    "cupy_sync_loop": [("sync-bound", 10)],
    "cupy_host_work": [("gpu-starved", 11)],
    "cupy_compute_bound": [],
    # The next four loops launch two ~2 us kernels per pass and drain the GPU
    # after each. Their GPU did 2-4 ms of work in all: not draining could
    # let the host overlap at most that much (the drains' cost is bounded by
    # the GPU work there is to overlap with; see
    # test_a_drain_costs_at_most_the_gpu_work_to_overlap), while launching
    # the tiny kernels costs the host 12-15 ms. Before that bound their idle
    # after each drain was counted whole, as if the launches that follow
    # would vanish with the drain.
    "cupy_crash": [],
    "torch_roundtrip": [("launch-bound", 9)],
    "torch_tiny_kernels": [("launch-bound", 9)],
    "torch_sync_loop": [("launch-bound", 9)],
    "torch_compute_bound": [],
    "torch_pinned_copy": [("transfer-bound", 13)],
    "multiproc": [],  # as cupy_crash: 2.9 ms of GPU work under 200 round trips
    "nvtx_cupy": [("cpu-fallback", None)],
    "nvtx_fallback": [("cpu-fallback", None)],
}


def line_no(label):
    return int(label.split(" ")[0].rsplit(":", 1)[1]) if label else None


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_diagnosis(name):
    rep = show(name)
    found = {(f["rule"], line_no(f["line"])) for f in rep["findings"]}
    for rule, line in EXPECTED[name]:
        assert any(r == rule and (line is None or l == line) for r, l in found), (name, found)
    if not EXPECTED[name]:  # must raise no alarm
        assert not [f for f in rep["findings"] if f["severity"] == "warning"], found
    if name == "torch_pinned_copy":  # copies at the pinned rate are not flagged as pageable
        assert not [f for f in rep["findings"] if f["rule"] == "pageable-transfer"]
    costs = [f["cost_s"] for f in rep["findings"]]
    assert costs == sorted(costs, reverse=True)


def events_facts(name):
    for line in (FIX / f"{name}.out").read_text(errors="replace").splitlines():
        if line.startswith("GPUOPT_CHECK "):
            return json.loads(line[len("GPUOPT_CHECK "):])
    return {}


@pytest.mark.parametrize("name,kind,line", [("cupy_compute_bound", "kernel", 11), ("torch_compute_bound", "kernel", 11),
                                            ("cupy_pageable", "D2H", 19), ("torch_pinned_copy", "H2D", 13)])
def test_fixture_times_agree_with_cuda_events(name, kind, line):
    rep = show(name)
    (row,) = [l for l in rep["lines"] if l["line"] == line and l["file"].endswith(f"{name}.py")]
    traced = row["kernel_ns"] if kind == "kernel" else sum(c["ns"] for c in row["copies"] if c["direction"] == kind)
    measured = events_facts(name)["kernel_event_ms" if kind == "kernel" else f"{kind.lower()}_event_ms"] * 1e6
    assert abs(traced / measured - 1) < 0.03, (traced, measured)


def recompute_idle(p, kernel_wait_ns):
    """The stream idle split as HTA defines it, from the timeline alone."""
    calls = {e[6]: e for e in p["events"] if e[0] == 5}
    split = {}
    last = {}
    for e in sorted((e for e in p["events"] if e[0] in (1, 2, 3)), key=lambda e: e[7]):
        key = (e[4], e[5])
        s = split.setdefault(key, [0, 0, 0])
        if key in last and e[7] >= last[key]:
            gap = e[7] - last[key]
            call = calls.get(e[6])
            s[0 if call and call[7] > last[key] else 1 if gap < kernel_wait_ns else 2] += gap
        last[key] = max(last.get(key, 0), e[8])
    return split


@pytest.mark.parametrize("name", ["cupy_roundtrip", "cupy_sync_loop", "cupy_host_work", "torch_roundtrip",
                                  "torch_tiny_kernels", "cupy_crash", "multiproc"])
def test_fixture_online_idle_split_matches_the_timeline(name):
    """The tracer splits idle time as records arrive; the timeline of the same
    run, recomputed here, must give the same numbers."""
    for p in json.loads(fixture(name).read_text())["processes"]:
        split = recompute_idle(p, p["settings"]["kernel_wait_ns"])
        for s in p["streams"]:
            want = split[(s["device"], s["stream"])]
            assert [s["host_wait"][1], s["kernel_wait"][1], s["other"][1]] == want


def test_fixture_text_report():
    r = run("trace", "show", "--lines", "3", "--kernels", "2", fixture("cupy_roundtrip"))
    assert r.rc == 0
    assert "Findings (most costly first):" in r.out and "roundtrip-storm" in r.out
    assert "500 device→host copies of 8 B each, every one a synchronize" in r.out
    assert "Time budget" in r.out and "Kernels (5, by total time)" in r.out
    assert "host wait" in r.out and "warm-up" in r.out


def test_gpu_starved_names_the_host_work_not_the_calls_around_it(tmp_path):
    """The H200 suite's host-work loop: the GPU waits after line 11's launch
    until line 13's; the host work is line 12, which makes no CUDA call. A
    gap inside one library call (CuPy staging a pageable copy in asarray) is
    the library's own host work, not lines to move."""
    r = run("trace", "show", fixture("cupy_host_work"))
    assert ("most after cupy_host_work.py:11 until cupy_host_work.py:13 gave it work again" in r.out and
            "the host work is on cupy_host_work.py line 12, which makes no CUDA call" in r.out), r.out
    # the pageable fixture's one 30.8 ms wait inside CuPy's asarray is one-off: no finding ...
    r = run("trace", "show", fixture("cupy_pageable"))
    assert "gpu-starved" not in r.out.split("Time budget")[0], r.out
    # ... and the same wait recurring (the fixture edited so: 12 times) is the library's own host work
    t = json.loads(Path(fixture("cupy_pageable")).read_text())
    for p in t["processes"]:
        for g in p["gaps"]:
            if g[3] == "long" and g[0] == g[2]:
                g[4] = 12
    edited = tmp_path / "recurring.json"
    edited.write_text(json.dumps(t))
    r = run("trace", "show", edited)
    assert "the host work is inside asarray at cupy_pageable.py:16, between its own CUDA calls" in r.out, r.out
    assert "between cupy_pageable.py:16 via cupy/_creation/from_data.py:94 asarray and" not in r.out


def test_one_off_waits_are_not_host_work_between_gpu_calls():
    """Real H200 traces (issue 24's first reading). pt_fpt_pageable waited
    6.2 s once, after its first allocation (libraries starting): that was
    ranked first as gpu-starved over the pageable copies of 7.2 GiB at line
    30; a wait that happens once is start-up, and the copies rank first now.
    jx_drone_sync: the waits before JAX's runtime threads made their first
    call (up to 6.1 s, compiles) were 'gpu-starved at (no Python frame)'; the
    GPU idle between its 10,000 steps at line 73 is what is left."""
    r = show("eval1_pt_fpt_pageable")
    top = r["findings"][0]
    assert top["rule"] in ("transfer-bound", "pageable-transfer") and top["line"].startswith("pt_fpt_pageable.py:30"), top
    assert not [f for f in r["findings"] if f["rule"] == "gpu-starved" and f["cost_s"] > 1], r["findings"]
    r = show("eval1_jx_drone_sync")
    top = r["findings"][0]
    assert top["rule"] == "gpu-starved" and top["line"].startswith("jx_drone_sync.py:73"), top
    assert "(9999 times" in top["evidence"], top


def test_pageable_copies_rank_before_the_transfer_time_they_explain():
    """mp_frames_pageable_crash (real H200 trace, set3's first reading, the
    default mode): two workers copy 40 batches each from pageable memory at
    line 50. transfer-bound (all copy time, 3.8 s) ranked above
    pageable-transfer (3.1 s of it beyond the pinned rate) at the same line;
    the copy time pinning would save is pageable-transfer's, so it ranks
    first, and transfer-bound keeps only what is left."""
    r = show("eval3_mp_frames_pageable")
    top = r["findings"][0]
    assert top["rule"] == "pageable-transfer" and top["line"].startswith("mp_frames_pageable_crash.py:50"), top
    pageable = sum(f["cost_s"] for f in r["findings"] if f["rule"] == "pageable-transfer")
    for f in r["findings"]:
        if f["rule"] == "transfer-bound":
            assert f["cost_s"] < 3.8 - pageable + 0.01, f


def test_idle_after_drains_no_finding_claims_is_host_work():
    """mp_a3c_workers (real H200 trace, set5's first reading, --exact): two
    workers each step a host-side environment and copy a scalar back per
    step. The GPU was busy 1% of a 5 s phase; the drains, bounded by the GPU
    work there was to overlap, explain under 5%, and their gaps were left
    out of gpu-starved too: "No bottleneck found". Idle after a drain that
    no drain finding claims is host work."""
    r = show("eval5_mp_a3c_workers_exact")
    assert not any(f["rule"] in ("sync-bound", "roundtrip-storm") for f in r["findings"]), r["findings"]
    top = r["findings"][0]
    assert top["rule"] == "gpu-starved" and top["share"] > 0.5, top
    assert top["line"].startswith("mp_a3c_workers_starved.py:87"), top


def test_allocation_time_inside_the_waits_is_memory_pressures_alone():
    """cp_clusterless_mempool (real H200 trace, set3's first reading): the
    pool is freed every chunk, so each step frees and allocates again while
    the GPU waits. That host time was counted twice, as memory-pressure
    (0.71 s) and inside gpu-starved's waits (1.04 s, ranked first, at the
    line that frees). It is memory-pressure's: gpu-starved keeps the rest."""
    r = show("eval3_cp_clusterless_mempool")
    top = r["findings"][0]
    assert top["rule"] == "memory-pressure" and top["line"].startswith("cp_clusterless_mempool.py:89"), top
    starved = [f for f in r["findings"] if f["rule"] == "gpu-starved"]
    assert starved and starved[0]["cost_s"] < 1.04 - 0.3, starved
    assert not starved[0]["line"].startswith("cp_clusterless_mempool.py:89"), starved


def test_round_trips_counted_by_the_callbacks_on_the_h200():
    """nb_grid_bfs_flag (real H200 trace of today's tracer, set3's first
    reading, default mode): the BFS copies a one-element flag back after
    every level. The callbacks decoded each copy (direction, bytes) and the
    GPU's idle after each drain on the host clock; the finding says how many
    and how small, at line 57."""
    doc = json.loads(fixture("eval3_nb_grid_bfs_flag").read_text())
    stats = [s for p in doc["processes"] for s in p["site_stats"] if s.get("copy_calls")]
    assert any(c[0] == 1 for s in stats for c in s["copy_calls"]), stats  # device to host, decoded
    assert any(s["drained"][0] > 0 and s["drained"][1] > 0 for s in stats), stats
    r = show("eval3_nb_grid_bfs_flag")
    top = r["findings"][0]
    assert top["rule"] == "roundtrip-storm" and top["line"].startswith("nb_grid_bfs_flag.py:57"), top


def all_fixtures():
    return sorted(p.stem for p in FIX.glob("*.json") if p.stem != "h200_trace_overhead")


def test_a_drain_costs_at_most_the_gpu_work_to_overlap():
    """A copy back or a synchronize makes the GPU wait while the host works;
    not draining lets that host work overlap GPU work, so it saves at most
    the GPU's busy time (plus the copies, and the host time the copy calls
    took beyond any GPU work they waited for). No finding claims more of the GPU
    phase than there is: before the bound, a JAX loop read as round trips
    costing 191% of its GPU phase, pt_flux_offload's pinned set-up as memory
    pressure costing 115%, and GPU-starved waits summed over streams could
    pass the phase too."""
    for name in all_fixtures():
        rep = show(name)
        b = rep["budget"]
        copies = sum(c["ns"] for c in b["copies"])
        lines = {l["label"]: l for l in rep["lines"]}
        for f in rep["findings"]:
            if f["rule"] == "sync-bound":
                assert f["cost_s"] * 1e9 <= b["gpu_busy_ns"] + 1e3, (name, f, b["gpu_busy_ns"])
            if f["rule"] == "roundtrip-storm":
                # ... and the host time its calls took beyond any GPU work they waited for
                calls = sum(lines[f["line"]]["calls"].get(op, {}).get("host_ns", 0) for op in ("memcpy", "sync"))
                latency = max(0, calls - b["gpu_busy_ns"])
                assert f["cost_s"] * 1e9 <= b["gpu_busy_ns"] + copies + latency + 1e3, (name, f, b["gpu_busy_ns"])
            if f["rule"] != "cpu-fallback":  # fallbacks are host time, outside the GPU phase too
                assert f["share"] <= 1.0 + 1e-9, (name, f)
    (f,) = [f for f in show("torch_sync_loop", "--set", "min_rule_seconds=0")["findings"] if f["rule"] == "sync-bound"]
    assert "the GPU had only 2.0 ms of work in all to overlap" in f["evidence"], f


def test_a_gpu_shared_with_other_processes_is_not_read_as_host_work():
    """cupy_tiny_kernels.py 20000 traced on the H200 alone and while two other
    processes ran 8192x8192 matrix products (scripts/gpu_shared_check.sh,
    2026-12-03, --exact and the default). The GPU time-slices between the
    contexts: the program's kernels queue, then run back to back. The
    tracer counts the time its queued kernels waited for the GPU beyond a
    launch's latency as held (other work), not as the host starving the GPU
    (set1 and set2 ran three programs at once, and their launch loops read
    as gpu-starved); the report says the GPU was shared."""
    for name in ("shared_gpu_exact", "shared_gpu_default"):
        rep = show(name)
        top = rep["findings"][0]
        assert top["rule"] == "launch-bound" and line_no(top["line"]) == 9, (name, rep["findings"])
        assert not [f for f in rep["findings"] if f["rule"] == "gpu-starved"], (name, rep["findings"])
        idle = rep["budget"]["idle"]
        assert idle["held_ns"] > 0.1 * rep["budget"]["run_ns"], (name, idle)
        assert idle["held_ns"] <= idle["other_ns"] and idle["host_wait_ns"] < 0.05 * rep["budget"]["run_ns"], idle
        assert "the GPU was running other work for" in run("trace", "show", fixture(name)).out
    rep = show("shared_gpu_alone_exact")
    assert rep["findings"][0]["rule"] == "launch-bound", rep["findings"]
    assert rep["budget"]["idle"]["held_ns"] < 0.01 * rep["budget"]["run_ns"], rep["budget"]["idle"]
    assert "the GPU was running other work" not in run("trace", "show", fixture("shared_gpu_alone_exact")).out


def test_calls_from_a_runtime_thread_are_charged_to_the_python_call_before():
    """jax_host_batching.py and torch_backward.py traced on the H200
    (scripts/gpu_runtime_thread_check.sh, 2026-12-03, --exact and the
    default). JAX runs a jitted step's copies and most of its launches on
    its own threads; PyTorch's autograd engine launches the backward pass
    from its own: none of those calls has a Python frame. They are charged
    to the newest call made from one (the step at line 27, loss.backward()
    at line 15) and marked as a runtime thread's; before, they were one
    line with no name ("(no Python frame)")."""
    for mode in ("exact", "default"):
        rep = show(f"runtime_jax_{mode}")
        lines = {l["label"]: l for l in rep["lines"]}
        # only calls before the first one from a Python frame (the runtime starting) keep no line
        unnamed = lines.get("(no Python frame)", {"kernels": 0})
        assert unnamed["kernels"] < 0.05 * rep["budget"]["kernels"], unnamed
        rt = lines["jax_host_batching.py:27 on a runtime thread (its Python call came before)"]
        assert rt["runtime_thread"] is True and rt["library_file"] is None, rt
        assert rt["calls"]["launch"]["count"] > 300 and rt["calls"]["sync"]["count"] > 100, rt
        top = rep["findings"][0]
        assert top["rule"] == "gpu-starved" and line_no(top["line"]) == 27, rep["findings"]
        rep = show(f"runtime_torch_{mode}")
        lines = {l["label"]: l for l in rep["lines"]}
        rt = lines["torch_backward.py:15 on a runtime thread (its Python call came before)"]
        assert rt["calls"]["launch"]["count"] == 2700, rt  # 9 backward kernels a step, 300 steps
    r = run("trace", "show", fixture("runtime_jax_exact"))
    assert "whose GPU work a runtime thread runs" in r.out, r.out


def test_allocations_that_are_kept_are_not_churn():
    """pt_flux_offload (real H200 trace, set3's first reading, --exact):
    pins 100 parameter buffers once at line 39 (1.18 s, one free in all),
    then copies each layer's weights to the GPU in a pre-hook at line 45
    (883 ms of the GPU's 1.0 s busy). Kept allocations are set-up, not churn:
    the copies are the finding, memory pressure is not first."""
    r = show("eval3_pt_flux_offload")
    top = r["findings"][0]
    assert top["rule"] == "transfer-bound" and top["line"].startswith("pt_flux_offload.py:45"), r["findings"]
    for f in r["findings"]:
        if f["rule"] == "memory-pressure":
            assert f["cost_s"] < 0.05, f


def test_the_warm_up_taken_off_the_gpu_phase_says_where_it_was():
    """pt_golem_item (real H200 trace): 4.48 s of warm-up is taken off its GPU
    phase, 4.30 s of it one wait, from the synchronize at line 48 to the first
    launch at line 31 (building the data and model before the training loop):
    the report says so, so the subtraction can be checked."""
    r = run("trace", "show", fixture("eval1_pt_golem_item"))
    assert "less 4.476 s of warm-up before kernels' first launches, 4.30 s of it once, after pt_golem_item.py:48" in r.out, r.out
    assert "until pt_golem_item.py:31 (train_epoch)" in r.out and "'s first launch):" in r.out, r.out
    b = show("eval1_pt_golem_item")["budget"]
    assert b["warmup_longest"]["ns"] > 4.2e9 and b["warmup_longest"]["after"].startswith("pt_golem_item.py:48"), b


def test_no_line_between_two_library_calls_is_launch_overhead():
    """pt_golem_item (real H200 trace): the GPU waits ~1 ms a step after
    loss.backward() (line 33) until optimizer.step() (line 34): no line of
    the user's runs between them, so the message says the time is inside
    those calls, not 'move the host work between those lines'."""
    r = show("eval1_pt_golem_item")
    (f,) = [f for f in r["findings"] if f["rule"] == "gpu-starved"]
    assert "no line of yours runs between them: the host time is inside the library calls themselves" in f["evidence"]
    assert "Tensor.backward returning" in f["evidence"], f
    rt = [f for f in r["findings"] if f["rule"] == "roundtrip-storm"]
    assert rt and "3000 device→host copies of 4 B each" in rt[0]["evidence"], r["findings"]


def test_sampled_copies_are_brought_to_the_calls_made():
    """A sampled run (real, H200) whose records went off in a fast stretch
    kept 4 of the 24 copies of 24 MiB that a helper line makes back to
    pageable memory, and found nothing; --exact names transfer-bound there.
    With the copy calls the callbacks count (direction and size of every
    call: here the --exact trace's, as the tracer now writes them), the
    records' time per byte is applied to the bytes copied, and the default
    reaches --exact's finding at the same line."""
    exact = show("eval1_cp_rl_timelapse_exact")
    t = json.loads(Path(fixture("eval1_cp_rl_timelapse_sampled")).read_text())
    x = json.loads(Path(fixture("eval1_cp_rl_timelapse_exact")).read_text())["processes"][0]
    def key(proc, site):  # a site as file names (without their folders) and lines
        return tuple(proc["strings"][v].rsplit("/", 1)[-1] if k in (0, 2, 3, 5) else v
                     for k, v in enumerate(proc["sites"][site]))

    calls = {}
    for st in x["site_stats"]:
        calls.setdefault(key(x, st["site"]), []).extend([c[0], c[2], c[3], c[4]] for c in st["copy"])
    p = t["processes"][0]
    for st in p["site_stats"]:
        st["copy_calls"] = calls.get(key(p, st["site"]), [])
        st["drained"] = [0, 0]
    edited = Path(os.environ.get("TMPDIR", "/tmp")) / f"gpuopt-sampled-{os.getpid()}.json"
    edited.write_text(json.dumps(t))
    try:
        r = run("trace", "show", "--format", "json", edited)
    finally:
        edited.unlink()
    got = json.loads(r.out)
    assert got["budget"]["sampling"]["estimated"], got["budget"]["sampling"]
    assert [(f["rule"], f["line"]) for f in got["findings"][:1]] == [(f["rule"], f["line"]) for f in exact["findings"][:1]]
    assert got["findings"][0]["line"].startswith("cp_rl_timelapse_helper.py:18"), got["findings"]
    (d2h,) = [c for c in got["budget"]["copies"] if c["direction"] == "D2H"]
    (want,) = [c for c in exact["budget"]["copies"] if c["direction"] == "D2H"]
    assert d2h["count"] == want["count"] == 24 + 24 and d2h["bytes"] == want["bytes"], (d2h, want)
    assert abs(d2h["ns"] / want["ns"] - 1) < 0.1, (d2h, want)


def test_fixture_crash_and_multiprocess_notes():
    r = run("trace", "show", fixture("cupy_crash"))
    assert "killed by signal 11" in r.out and "its trace was saved at the signal" in r.out
    rep = show("cupy_crash")
    assert rep["exit"]["signal"] == 11 and rep["processes"][0]["flush"] == "signal"


def test_fixture_torch_profiler_inside():
    """torch.profiler in a traced program gets no CUPTI (one subscriber): gpuopt
    traced it; the program's profiler saw no CUDA events."""
    rep = show("torch_profiler_inside")
    assert rep["traced"] and rep["budget"]["kernels"] > 100
    assert events_facts("torch_profiler_inside")["profiler_cuda_events"] == 0
    assert "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" in (FIX / "torch_profiler_inside.out").read_text()


def test_set_changes_a_threshold():
    base = {f["rule"] for f in show("cupy_roundtrip")["findings"]}
    assert "roundtrip-storm" in base
    raised = {f["rule"] for f in show("cupy_roundtrip", "--set", "roundtrip_min_count=100000")["findings"]}
    assert "roundtrip-storm" not in raised


def test_damaged_traces_are_refused(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = run("trace", "show", bad)
    assert r.rc == 2 and f"gpuopt: trace show: '{bad}': not JSON" in r.err
    doc = json.loads(fixture("cupy_compute_bound").read_text())
    doc["format"] = "something-else"
    bad.write_text(json.dumps(doc))
    r = run("trace", "show", bad)
    assert r.rc == 2 and "not a saved gpuopt trace" in r.err
    doc = json.loads(fixture("cupy_compute_bound").read_text())
    doc["processes"][0]["sites"][2][0] = 10 ** 6
    bad.write_text(json.dumps(doc))
    r = run("trace", "show", bad)
    assert r.rc == 2 and "refers to a string the summary does not have" in r.err
    doc = json.loads(fixture("cupy_compute_bound").read_text())
    doc["processes"][0]["streams"][0]["held"] = [1, 10 ** 15]
    bad.write_text(json.dumps(doc))
    r = run("trace", "show", bad)
    assert r.rc == 2 and "held time is more than its other idle time" in r.err, r.err
    doc["processes"][0]["streams"][0]["held"] = [1]
    bad.write_text(json.dumps(doc))
    assert run("trace", "show", bad).rc == 2
    r = run("trace", "show", tmp_path / "missing.json")
    assert r.rc == 2 and "cannot read" in r.err
    text = fixture("cupy_compute_bound").read_text()
    bad.write_text(text[: len(text) // 2])
    assert run("trace", "show", bad).rc == 2


def test_trace_show_memory_stays_near_the_timeline_it_holds(tmp_path):
    """An 85 MB trace took 1.08 GB to show (a JSON tree of every event: about
    1 kB each). The bound, per event of the timeline: the event itself, the
    80-byte struct trace_event (tracefmt.h) that gpuopt keeps, about the size
    of its ~67 bytes of text, with a quarter more for slack; plus what the
    same build takes for the recorded trace the big one repeats (the program,
    its tables and, under sanitizers, their own memory), and 16 MB for the
    mapped text read in 8 MB steps that go back to the kernel and the summary's
    JSON. On ~30 MB (444,518 events): a bound of about 71 MB, 46 MB used;
    before the fix, 498 MB. With -o, the report goes to a file in the same memory."""
    big = tmp_path / "big.json"
    subprocess.run([sys.executable, ROOT / "bench" / "trace_big.py", "--size", "30", big], check=True,
                   capture_output=True)
    small = fixture("cupy_tiny_kernels")
    per_copy = len(json.loads(small.read_text())["processes"][0]["events"])
    peaks = {}
    # measured from a fresh interpreter, whose only child is gpuopt: a child's
    # peak starts from its parent's size when it was forked (pytest's here)
    probe = ("import os, resource, subprocess, sys\n"
             "with open(sys.argv[1], 'wb') as out:\n"
             "    rc = subprocess.run(sys.argv[2:], stdout=out).returncode\n"
             "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    for name, path in (("small", small), ("big", big)):
        out = tmp_path / f"{name}.out"
        r = subprocess.run([sys.executable, "-c", probe, out, BINARY, "trace", "show", "-q", "--format", "json",
                            path], capture_output=True, text=True, timeout=120)
        rc, peak_kib = r.stdout.split()
        assert rc == "0", r.stderr
        peaks[name] = int(peak_kib) * 1024
        events = json.loads(out.read_text())["processes"][0]["events"]
    assert events % per_copy == 0 and events >= 400_000, events  # every row of the big one was read
    bound = peaks["small"] + 1.25 * 80 * events + 16e6
    assert peaks["big"] <= bound, (f"{peaks['big'] / 1e6:.1f} MB for {big.stat().st_size / 1e6:.1f} MB, "
                                   f"{events} events; bound {bound / 1e6:.1f} MB")
    # -o writes the report (as every command's -o), not a copy of the trace: the same report, in
    # the same memory
    report = tmp_path / "report.json"
    r = subprocess.run([sys.executable, "-c", probe, tmp_path / "saved.out", BINARY, "trace", "show", "-q",
                        "--format", "json", "-o", report, big], capture_output=True, text=True, timeout=120)
    rc, peak_kib = r.stdout.split()
    assert rc == "0", r.stderr
    assert (tmp_path / "saved.out").read_text() == ""
    assert json.loads(report.read_text()) == json.loads((tmp_path / "big.out").read_text())
    assert int(peak_kib) * 1024 <= bound, (f"-o: {int(peak_kib) / 1e3:.1f} MB for {big.stat().st_size / 1e6:.1f} "
                                           f"MB; bound {bound / 1e6:.1f} MB")


# ---- record sampling (the default; --exact records everything) ----
# torch_tiny_kernels_sampled: torch_tiny_kernels.py 100000 traced with the
# first sampling tracer (kernel records only), on the H200 in the call that
# also traced it with every record: 99,801 kernels estimated from 9,352
# recorded, against 100,001 recorded in full (fixtures' README).

def test_sampled_fixture_is_diagnosed_and_says_it_estimated():
    rep = show("torch_tiny_kernels_sampled")
    found = {(f["rule"], line_no(f["line"])) for f in rep["findings"]}
    assert ("launch-bound", 9) in found, found
    b = rep["budget"]
    assert b["sampling"]["estimated"] is True
    assert 0 < b["sampling"]["recorded_launches"] < b["sampling"]["sampled_launches"] <= b["launches"]
    # every launch counted by the callbacks; the kernels estimated from a tenth of them
    assert b["launches"] >= 100000
    assert abs(b["kernels"] / b["launches"] - 1) < 0.01
    (p,) = rep["processes"]
    assert p["sampling"]["sampled"] is True and p["sampling"]["windows"] > 0
    r = run("trace", "show", "--lines", "3", fixture("torch_tiny_kernels_sampled"))
    assert r.rc == 0 and "Sampled: launches came faster than CUPTI records cheaply" in r.out
    assert "estimated" in r.out


def test_unsampled_traces_say_nothing_of_sampling():
    rep = show("torch_tiny_kernels")
    assert rep["budget"]["sampling"]["estimated"] is False
    assert "Sampled:" not in run("trace", "show", fixture("torch_tiny_kernels")).out


# cupy_tiny_kernels_sampled: cupy_tiny_kernels.py 100000 with --sample on the
# H200 (session 8, the tracer with the phase history), in the call that also
# traced it with every record: 100,001 kernels, 89,567,410 ns
# (bench/results/h200_trace_suite_session8.log, section 1b).

def test_sampled_cupy_fixture_estimates_the_kernels_of_the_full_trace():
    rep = show("cupy_tiny_kernels_sampled")
    (p,) = rep["processes"]
    assert p["unattributed"] == 0
    b = rep["budget"]
    assert b["sampling"]["estimated"] is True
    assert abs(b["kernels"] / 100001 - 1) < 0.01, b["kernels"]
    assert abs(b["kernel_ns"] / 89567410 - 1) < 0.01, b["kernel_ns"]
    assert abs(b["gpu_busy_ns"] / 89567410 - 1) < 0.01, b["gpu_busy_ns"]
    r = run("trace", "show", fixture("cupy_tiny_kernels_sampled"))
    assert r.rc == 0 and "records lost" not in r.out


# cupy_tiny_kernels_drained: cupy_tiny_kernels.py 100000 sampled as gpuopt trace
# now does by default (every kind off between windows, CUPTI's buffers flushed as
# each closes), on the H200 in the call that also traced it with every record:
# 100,001 kernels, 89,420,154 ns (fixtures' README).

def test_drained_windows_keep_their_records_and_estimate_the_full_trace():
    rep = show("cupy_tiny_kernels_drained")
    (p,) = rep["processes"]
    s = p["sampling"]
    assert p["unattributed"] == 0 and s["windows"] == 6
    assert s["recorded_kernels"] * 2 >= s["recorded_launches"] > 0  # the windows kept their kernels
    b = rep["budget"]
    assert abs(b["kernels"] / 100001 - 1) < 0.01, b["kernels"]
    assert abs(b["kernel_ns"] / 89420154 - 1) < 0.01, b["kernel_ns"]
    idle = b["idle"]["host_wait_ns"] + b["idle"]["kernel_wait_ns"] + b["idle"]["other_ns"]
    assert abs((idle + b["gpu_busy_ns"]) / (b["gpu_phase_ns"] + b["warmup_ns"]) - 1) < 0.01, b
    assert ("launch-bound", 9) in {(f["rule"], line_no(f["line"])) for f in rep["findings"]}
    r = run("trace", "show", fixture("cupy_tiny_kernels_drained"))
    assert r.rc == 0 and "Sampled: launches came faster" in r.out and "records lost" not in r.out


# cupy_tiny_kernels_nowindows, torch_tiny_kernels_nowindows: the programs with
# 100,000 launches traced as gpuopt trace does by default since session 12 (the
# records off through the fast stretch, no window), on the H200 in the call that
# also traced them with every record: CuPy 100,001 kernels, 90,635,073 ns;
# PyTorch 100,001 kernels, 86,057,027 ns (fixtures' README).

@pytest.mark.parametrize("name,kernel_ns", [("cupy_tiny_kernels_nowindows", 90635073),
                                            ("torch_tiny_kernels_nowindows", 86057027)])
def test_a_stretch_without_windows_estimates_the_full_trace(name, kernel_ns):
    rep = show(name)
    (p,) = rep["processes"]
    s = p["sampling"]
    assert s["windows"] == 0 and s["sampled_launches"] > 98000 and p["unattributed"] == 0
    b = rep["budget"]
    assert abs(b["kernels"] / 100001 - 1) < 0.01, b["kernels"]
    assert abs(b["kernel_ns"] / kernel_ns - 1) < 0.01, b["kernel_ns"]
    assert abs(b["gpu_busy_ns"] / kernel_ns - 1) < 0.01, b["gpu_busy_ns"]
    idle = b["idle"]["host_wait_ns"] + b["idle"]["kernel_wait_ns"] + b["idle"]["other_ns"]
    assert abs((idle + b["gpu_busy_ns"]) / (b["gpu_phase_ns"] + b["warmup_ns"]) - 1) < 0.03, b
    assert ("launch-bound", 9) in {(f["rule"], line_no(f["line"])) for f in rep["findings"]}
    r = run("trace", "show", fixture(name))
    text = " ".join(r.out.split())
    assert r.rc == 0 and "records were off while they did" in text and "records lost" not in text, r.out


def drained_ending_where_sampling_began(**sampling):
    """The drained fixture's summary edited so that the device's last record
    comes where sampling began and the last launch made while sampling where
    that record was, with `sampling` set on top: (doc, process, device)."""
    doc = json.loads(fixture("cupy_tiny_kernels_drained").read_text())
    p = doc["processes"][0]
    dev = p["devices"][0]
    p["sampling"].update(sampling, last_launch=dev["last"])
    dev["last"] = p["sampling"]["since"]
    return doc, p, dev


def test_a_stretch_without_windows_is_said_and_ends_the_gpu_phase_at_the_last_launch(tmp_path):
    # The default since session 12: no window, the records off through the
    # fast stretch. The drained fixture edited as such a run's summary
    # looks (windows 0, the device's last record where sampling began): the
    # report says how the stretch was counted, not "records lost", and the
    # GPU phase runs to the last launch made while sampling, as where
    # windows lost their records.
    doc, p, dev = drained_ending_where_sampling_began(windows=0)
    f = tmp_path / "windowless.json"
    r = show_edited(f, doc)
    text = " ".join(r.out.split())
    assert r.rc == 0 and "count one kernel each at the mean time of the kernels recorded before" in text \
        and "records lost" not in text, r.out
    b = json.loads(run("trace", "show", "--format", "json", f).out)["budget"]
    assert b["gpu_phase_ns"] + b["warmup_ns"] >= p["sampling"]["last_launch"] - dev["first"] - 1, b


def test_windows_that_lost_their_records_end_the_gpu_phase_at_the_last_launch(tmp_path):
    # The drained fixture edited as a process whose windows lost their
    # records looks (session 10: a 0.021 s GPU phase, busy 437% of it): no
    # kernel record of the launches made while recording, the device's last
    # record where sampling began. The phase then runs to the last launch
    # made while sampling (the tracer's sampling.last_launch, same clock),
    # and what the records do not explain there is idle time, unsplit.
    doc, p, dev = drained_ending_where_sampling_began(recorded_kernels=0)
    full = show("cupy_tiny_kernels_drained")["budget"]
    f = tmp_path / "lost.json"
    r = show_edited(f, doc)
    assert r.rc == 0 and "Sampled, records lost:" in r.out and "runs to the last of those launches" in \
        " ".join(r.out.split()), r.out
    rep = json.loads(run("trace", "show", "--format", "json", f).out)
    b = rep["budget"]
    assert rep["processes"][0]["sampling"]["last_launch"] == p["sampling"]["last_launch"]
    assert b["gpu_phase_ns"] == full["gpu_phase_ns"] and b["gpu_busy_ns"] == full["gpu_busy_ns"]
    idle = b["idle"]["host_wait_ns"] + b["idle"]["kernel_wait_ns"] + b["idle"]["other_ns"]
    assert abs((idle + b["gpu_busy_ns"]) / (b["gpu_phase_ns"] + b["warmup_ns"]) - 1) < 0.01, b
    assert b["gpu_busy_ns"] < b["gpu_phase_ns"]
    # a tracer before the field: the phase ends at the last record, as it did
    del p["sampling"]["last_launch"]
    f.write_text(json.dumps(doc))
    b = json.loads(run("trace", "show", "--format", "json", f).out)["budget"]
    assert b["gpu_phase_ns"] < full["gpu_phase_ns"] / 5


def test_sampled_idle_time_stays_within_the_gpu_phase():
    # Recording slows launches, so the gaps seen in the windows are longer
    # than the rest and their estimate ran past the GPU phase (1.63 s idle +
    # 0.09 s busy in a 1.55 s phase for the CuPy fixture): capped at the
    # device's span less its busy time, with the gaps by line.
    for name in ("cupy_tiny_kernels_sampled", "torch_tiny_kernels_sampled", "cupy_tiny_kernels_drained"):
        b = show(name)["budget"]
        idle = b["idle"]["host_wait_ns"] + b["idle"]["kernel_wait_ns"] + b["idle"]["other_ns"]
        assert b["gpu_busy_ns"] + idle <= b["gpu_phase_ns"] + b["warmup_ns"] + 1000, (name, b)
        for f in show(name)["findings"]:
            assert f["cost_s"] * 1e9 <= b["gpu_phase_ns"] + b["warmup_ns"] + 1000, (name, f)

# cupy_tiny_kernels_sampled_ring_wrap: cupy_tiny_kernels.py 100000 with --sample
# on the H200, whose sparse buffers came back after the table of calls had
# wrapped (fixtures' README): 2,760 of its 10,294 records found no call.

def test_records_not_matched_to_their_calls_are_said_to_be_missing_from_the_lines():
    rep = show("cupy_tiny_kernels_sampled_ring_wrap")
    (p,) = rep["processes"]
    assert p["unattributed"] == 2760 and p["records"] == 10294
    r = run("trace", "show", fixture("cupy_tiny_kernels_sampled_ring_wrap"))
    assert r.rc == 0
    assert ("Unmatched: 2760 of the 10294 records (27%) were not matched to the call that made them"
            in " ".join(r.out.split())), r.out
    # a trace whose records all found their calls says nothing of it
    for name in ("torch_tiny_kernels", "torch_tiny_kernels_sampled", "cupy_roundtrip"):
        assert "Unmatched:" not in run("trace", "show", fixture(name)).out, name


def test_sampling_counts_that_cannot_be_are_refused(tmp_path):
    doc = json.loads(fixture("torch_tiny_kernels_sampled").read_text())
    s = doc["processes"][0]["sampling"]
    s["recorded_launches"] = s["sampled_launches"] + 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = run("trace", "show", bad)
    assert r.rc == 2 and str(bad) in r.err and "'sampling' counts more recorded than sampled" in r.err
    s["recorded_launches"] = s["sampled_launches"] - 1
    s.update(toggles=4, toggle_ns=1000, toggle_max_ns=1001)
    bad.write_text(json.dumps(doc))
    r = run("trace", "show", bad)
    assert r.rc == 2 and "'sampling' has a longest switch of the records longer than all" in r.err, r
    s["toggle_max_ns"] = 400
    bad.write_text(json.dumps(doc))
    rep = json.loads(run("trace", "show", "--format", "json", bad).out)
    assert {k: rep["processes"][0]["sampling"][k] for k in ("toggles", "toggle_ns", "toggle_max_ns")} == \
        {"toggles": 4, "toggle_ns": 1000, "toggle_max_ns": 400}
    doc["processes"][0]["sampling"] = []
    bad.write_text(json.dumps(doc))
    r = run("trace", "show", bad)
    assert r.rc == 2 and "'sampling' is not an object" in r.err


def show_edited(f, doc):
    """Writes doc (a fixture, edited) to f; gpuopt trace show's text result."""
    f.write_text(json.dumps(doc))
    return run("trace", "show", f)


def test_records_without_times_are_said_and_checked(tmp_path):
    doc = json.loads(fixture("torch_tiny_kernels").read_text())
    counts = doc["processes"][0]["counts"]
    counts["untimed"] = 3
    f = tmp_path / "untimed.json"
    r = show_edited(f, doc)
    assert r.rc == 0 and "Untimed: CUPTI gave 3 kernel, copy or memset records without valid times" in \
        " ".join(r.out.split()), r.out
    assert json.loads(run("trace", "show", "--format", "json", f).out)["processes"][0]["untimed"] == 3
    counts["untimed"] = counts["records"] + 1
    r = show_edited(f, doc)
    assert r.rc == 2 and str(f) in r.err and "more records without times" in r.err, r
    counts["untimed"], counts["early"] = 3, 2
    f.write_text(json.dumps(doc))
    assert json.loads(run("trace", "show", "--format", "json", f).out)["processes"][0]["early"] == 2
    # traces without the field (every fixture recorded before it) say nothing
    assert "Untimed:" not in run("trace", "show", fixture("torch_tiny_kernels")).out


def test_sample_is_refused_beside_options_that_keep_every_record():
    for extra in (["--timeline"], ["--full"], ["--export-trace", "x.json"], ["--exact"]):
        r = run("trace", "--sample", *extra, "--", "true")
        assert r.rc == 2 and "--sample leaves records out" in r.err, (extra, r)
    for opt in ("--sample", "--exact"):
        r = run("trace", "show", opt, fixture("torch_tiny_kernels"))
        assert r.rc == 2 and opt in r.err, (opt, r)
    # sampling is the default: its window (0, none, by default) is checked with or without --sample
    for sets in (["sample_window_ms=200"], ["sample_window_ms=10", "sample_period_ms=5"],
                 ["sample_window_ms=0.5"]):
        for opts in ([], ["--sample"]):
            r = run("trace", *opts, *[a for v in sets for a in ("--set", v)], "--", "true")
            assert r.rc == 2 and "sample_window_ms" in r.err and "shorter than sample_period_ms" in r.err, \
                (sets, opts, r)
    for sets in (["sample_window_ms=0"], ["sample_period_ms=5"], ["sample_window_ms=10"]):
        r = run("trace", "-q", "--set", sets[0], "--", "true")
        assert r.rc != 2 and "sample_window_ms" not in r.err, (sets, r)
    # ... and not where nothing is sampled
    for opt in ("--exact", "--timeline"):
        r = run("trace", "-q", opt, "--set", "sample_window_ms=300", "--", "true")
        assert r.rc != 2 and "sample_window_ms" not in r.err, (opt, r)


def test_allocations_between_windows_are_said_to_be_left_out(tmp_path):
    doc = json.loads(fixture("cupy_tiny_kernels_sampled").read_text())
    s = doc["processes"][0]["sampling"]
    s["unseen_allocs"] = 7
    f = tmp_path / "unseen.json"
    r = show_edited(f, doc)
    assert r.rc == 0 and ("Sampled, memory: 7 allocations and frees were made while CUPTI's allocation records were off"
                          in " ".join(r.out.split())), r.out
    rep = json.loads(run("trace", "show", "--format", "json", f).out)
    assert rep["processes"][0]["sampling"]["unseen_allocs"] == 7
    assert rep["budget"]["sampling"]["unseen_allocs"] == 7
    s["unseen_allocs"] = "seven"
    r = show_edited(f, doc)
    assert r.rc == 2 and str(f) in r.err and "unseen_allocs" in r.err, r
    # summaries without the field (every fixture recorded before it) say nothing
    assert "Sampled, memory" not in run("trace", "show", fixture("cupy_tiny_kernels_sampled")).out


# ---- the Chrome-trace export ----

def export(name, tmp_path):
    out = tmp_path / f"{name}.trace.json"
    r = run("trace", "show", "--export-trace", out, fixture(name))
    assert r.rc == 0, r
    return json.loads(out.read_text())


def test_export_has_kinetos_names(tmp_path):
    doc = export("torch_roundtrip", tmp_path)
    ev = doc["traceEvents"]
    cats = {e.get("cat") for e in ev}
    assert {"kernel", "gpu_memcpy", "cuda_runtime", "python_function", "ac2g"} <= cats
    k = next(e for e in ev if e.get("cat") == "kernel")
    assert {"device", "stream", "correlation", "grid", "block"} <= set(k["args"])
    m = next(e for e in ev if e.get("cat") == "gpu_memcpy")
    assert {"bytes", "memory bandwidth (GB/s)", "device", "stream", "correlation"} <= set(m["args"])
    starts = {e["id"] for e in ev if e.get("ph") == "s"}
    ends = {e["id"] for e in ev if e.get("ph") == "f"}
    gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    assert starts == ends and len(ends) == len(gpu) == 1501
    py = [e for e in ev if e.get("cat") == "python_function"]
    assert any("torch_roundtrip.py(10)" in e["name"] for e in py)


def test_export_needs_a_timeline(tmp_path):
    r = run("trace", "show", "--export-trace", tmp_path / "x.json", fixture("torch_profiler_inside"))
    assert r.rc == 2 and "no timeline to export" in r.err
    assert not (tmp_path / "x.json").exists()


HTA_CHECK = r"""
import json, logging, os, sys, warnings
warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
ta = TraceAnalysis(trace_dir=sys.argv[1])
idle, _ = ta.get_idle_time_breakdown(visualize=False, consecutive_kernel_delay=float(sys.argv[2]))
_, kern = ta.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=100000)
print(json.dumps({
    "idle": [[int(r.stream), r.idle_category, float(r.idle_time)] for r in idle.itertuples()],
    "kernels": {row["name"]: float(row["sum (us)"]) for _, row in kern.iterrows()},
}))
"""


@pytest.mark.parametrize("name", ["cupy_roundtrip", "cupy_host_work", "torch_sync_loop", "torch_tiny_kernels",
                                  "cupy_pageable"])
def test_holistic_trace_analysis_reads_the_export_and_agrees(tmp_path, name):
    """HTA (HolisticTraceAnalysis 0.5.0, requirements/trace-tests.txt) loads the
    export; its idle-time breakdown per stream (host wait / kernel wait /
    other) and its kernel table equal gpuopt's own numbers. HTA works in the
    trace's microseconds (ns rounding off)."""
    py = venv_python()
    d = tmp_path / "hta"
    d.mkdir()
    doc = export(name, tmp_path)
    (d / "trace.json").write_text(json.dumps(doc))
    saved = json.loads(fixture(name).read_text())
    kw_us = saved["processes"][0]["settings"]["kernel_wait_ns"] / 1000
    p = subprocess.run([py, "-c", HTA_CHECK, str(d), str(kw_us)], capture_output=True, text=True,
                       env={**os.environ, "HTA_DISABLE_NS_ROUNDING": "1"}, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    hta = json.loads(p.stdout.strip().splitlines()[-1])
    mine = {}
    for proc in saved["processes"]:
        for s in proc["streams"]:
            for cat, key in (("host_wait", "host_wait"), ("kernel_wait", "kernel_wait"), ("other", "other")):
                mine[(s["stream"], cat)] = mine.get((s["stream"], cat), 0) + s[key][1] / 1000
    got = {(st, cat): t for st, cat, t in hta["idle"]}
    for key, us in mine.items():
        assert abs(got.get(key, 0.0) - us) <= max(1.0, 1e-6 * us), (key, got.get(key), us)
    rep = show(name)
    for k in rep["kernels"]:
        assert abs(hta["kernels"][k["name"]] - k["total_ns"] / 1000) <= 1.0, k["name"]


def test_memory_pressure_rule(tmp_path):
    """The memory-pressure rule's two halves, on a recorded trace changed in
    one place each (the suite has no program that fills the device): a peak
    near the device's capacity, and allocation churn."""
    doc = json.loads(fixture("cupy_compute_bound").read_text())
    total = doc["gpu"]["devices"][0]["memory_total_bytes"]
    doc["processes"][0]["devices"][0]["mem_peak"] = int(total * 0.95)
    path = tmp_path / "full.json"
    path.write_text(json.dumps(doc))
    r = run("trace", "show", "--format", "json", path)
    (f,) = [f for f in json.loads(r.out)["findings"] if f["rule"] == "memory-pressure"]
    assert "allocated at its peak" in f["evidence"] and "(95%)" in f["evidence"]
    doc = json.loads(fixture("cupy_compute_bound").read_text())
    for s in doc["processes"][0]["site_stats"]:
        if "alloc" in s["api"]:
            s["api"]["alloc"] = [500, 400_000_000]
            s["api"]["free"] = [500, 100_000_000]
            break
    path.write_text(json.dumps(doc))
    (f,) = [f for f in json.loads(run("trace", "show", "--format", "json", path).out)["findings"]
            if f["rule"] == "memory-pressure"]
    assert "505 allocations and 508 frees took 501.4 ms of host time" in f["evidence"], f["evidence"]
