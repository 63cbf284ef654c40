"""`gpuopt doctor`: the surface and exit codes; the plain "no NVIDIA driver"
answer on a machine without one; the Python probe against Debian's own
/usr/bin/python3 and its packages, and against the virtual environment that
scripts/setup.sh fills with real GPU packages from PyPI (cupy-cuda13x from
requirements/base.txt; cudf-cu13, cuml-cu13, nx-cugraph-cu13, warp-lang from
requirements/gpu-packages.txt, which a set-up short of disk leaves out); an import that crashes or
hangs (each package on its own time limit, the others still asked); packages that print junk or
write forged answers to every file descriptor they find; and the report recorded
on the H200 (tests/e2e/fixtures/h200_doctor.json) against that machine's
`pip list` and the packages' own reports."""
import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, run, skip_unless_installed

FIXTURES = ROOT / "tests" / "e2e" / "fixtures"
DEBIAN_PY = "/usr/bin/python3"
VENV_PY = ROOT / ".venv" / "bin" / "python"
GPU_WHEELS = {"cupy": "cupy-cuda13x", "cudf": "cudf-cu13", "cuml": "cuml-cu13",
              "nx-cugraph": "nx-cugraph-cu13", "warp": "warp-lang"}
TOP_KEYS = {"tool", "version", "schema", "error", "ready", "counts", "problems", "gpu", "python"}
PACKAGE_KEYS = {"name", "gpu", "installed", "dist", "version", "cuda_major", "cuda_from",
                "runtime_version", "importable", "import_error", "device_ok", "device_count",
                "device_error", "crashed", "timed_out", "time_limit_s", "asked", "submodules"}


def nvidia_driver_present():
    return Path("/dev/nvidiactl").exists() or Path("/proc/driver/nvidia").exists()


no_driver = pytest.mark.skipif(nvidia_driver_present(), reason="this machine has an NVIDIA driver")


def doctor_json(*args, **kw):
    r = run("doctor", "--format", "json", *args, **kw)
    assert r.rc in (0, 1), r
    doc = r.json()
    assert set(doc) == TOP_KEYS and doc["schema"] == "gpuopt-doctor/1", doc.keys()
    return doc, r


def packages(doc):
    return {p["name"]: p for p in doc["python"]["packages"]}


def ids(doc):
    return [p["id"] for p in doc["problems"]]


# ---- the surface ----

def test_help_is_routed_and_complete():
    r = run("doctor", "--help")
    assert r.rc == 0 and r.out.startswith("Usage: gpuopt doctor")
    assert run("help", "doctor").out == r.out
    for word in ["--python", "--no-python", "--timeout", "--package-timeout", "--format", "--output", "--verbose",
                 "Exit codes", "-cu12", "warp.sim", "cuSpatial"]:
        assert word in r.out, word
    assert "doctor" in run("--help").out


@pytest.mark.parametrize("args, message", [
    (["--bogus"], "unknown option '--bogus'"),
    (["--format", "xml"], "'xml' is not text or json"),
    (["--timeout", "0"], "not a number of seconds above 0"),
    (["--package-timeout", "-1"], "--package-timeout: '-1' is not a number of seconds above 0"),
    (["--package-timeout", ""], "--package-timeout: '' is not a number of seconds above 0"),
    (["--timeout"], "needs a value"),
    (["extra"], "unexpected argument 'extra'"),
    (["--python", "python3", "--no-python"], "give one or the other"),
    (["--python", "gpuopt-no-such-python"], "--python 'gpuopt-no-such-python': command not found"),
])
def test_usage_errors_exit_2(args, message):
    r = run("doctor", *args)
    assert r.rc == 2 and r.out == "", r
    assert r.err.startswith("gpuopt: doctor: ") and message in r.err, r


def test_output_file_is_written_whole(tmp_path):
    out = tmp_path / "doctor.json"
    r = run("doctor", "--no-python", "--format", "json", "-o", out)
    assert r.rc in (0, 1) and r.out == "", r
    assert json.loads(out.read_text())["schema"] == "gpuopt-doctor/1"
    r = run("doctor", "--no-python", "-o", tmp_path / "no" / "such" / "dir" / "x.txt")
    assert r.rc == 2 and "cannot write" in r.err


# ---- no driver ----

@no_driver
def test_no_driver_is_said_plainly_and_blocks():
    r = run("doctor", "--no-python")
    assert r.rc == 1, r
    first = r.out.splitlines()
    assert first[0].startswith("gpuopt doctor: GPU work cannot start here (1 blocker")
    # what blocks comes first, with its fix
    assert first[2].startswith("blocker [no-driver] no NVIDIA driver: libcuda.so.1")
    assert "fix: install the NVIDIA driver: R580 or newer" in r.out
    assert "GPU: none (NVML: libnvidia-ml.so.1:" in r.out
    doc, r = doctor_json("--no-python")
    assert r.rc == 1 and doc["ready"] is False and doc["python"] is None
    assert doc["problems"][0]["id"] == "no-driver" and doc["problems"][0]["severity"] == "blocker"
    assert doc["problems"][0]["fixes"] and doc["problems"][0]["source"]
    assert doc["gpu"]["found"] is False and doc["gpu"]["devices"] == []


# ---- Debian's own Python ----

def metadata_versions(python, names):
    code = ("import json, sys\nfrom importlib import metadata\nout = {}\n"
            "for n in sys.argv[1:]:\n    try: out[n] = metadata.version(n)\n"
            "    except Exception: out[n] = None\nprint(json.dumps(out))")
    return json.loads(subprocess.run([python, "-c", code, *names], capture_output=True, text=True,
                                     check=True).stdout)


@pytest.mark.skipif(not Path(DEBIAN_PY).exists(), reason="no /usr/bin/python3")
def test_debian_python_and_its_packages():
    doc, r = doctor_json("--python", DEBIAN_PY)
    py = doc["python"]
    assert py["found"] and py["error"] is None
    real = subprocess.run([DEBIAN_PY, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3]); "
                           "print(sys.executable)"], capture_output=True, text=True).stdout.split()
    assert py["version"] == real[0] and py["executable"] == real[1]
    pk = packages(doc)
    assert set(pk) == {p["name"] for p in json.load(open(ROOT / "data" / "doctor" / "packages.json"))["packages"]}
    assert all(set(p) == PACKAGE_KEYS for p in pk.values())
    dists = {n: p["dist"] or n for n, p in pk.items()}
    want = metadata_versions(DEBIAN_PY, ["numpy", "scipy", "pandas", "scikit-learn", "networkx",
                                         "scikit-image", "pytest"])
    for name in ["numpy", "scipy", "pandas", "scikit-learn", "networkx", "scikit-image"]:
        assert pk[name]["version"] == want[name], name
        if want[name]:
            assert pk[name]["installed"] and pk[name]["importable"] and not pk[name]["gpu"], pk[name]
            assert pk[name]["cuda_major"] is None
    assert pk["numpy"]["installed"] == (want["numpy"] is not None)  # setup.sh installs python3-numpy
    # Debian has no GPU package: said so, with the install command for CUDA 13
    assert not any(p["installed"] for p in pk.values() if p["gpu"]), dists
    assert "no-gpu-package" in ids(doc) and r.rc == 1
    fix = next(p for p in doc["problems"] if p["id"] == "no-gpu-package")["fixes"]
    assert 'pip install "cupy-cuda13x[ctk]"' in fix
    text = run("doctor", "--python", DEBIAN_PY).out
    assert f"Python {py['version']}: {py['executable']}" in text
    assert "  not installed: " in text and "cupy" in text.split("not installed: ")[1]


# ---- a virtual environment of real GPU packages ----

def check_gpu_wheels(doc, wheels):
    """Each of wheels ({name: distribution}) found as installed from PyPI: its version as
    the interpreter's metadata says, built for CUDA 13, and no device reachable here."""
    pk = packages(doc)
    want = metadata_versions(VENV_PY, list(wheels.values()))
    for name, dist in wheels.items():
        p = pk[name]
        assert p["installed"] and p["gpu"] and p["importable"], p
        assert p["dist"] == dist and p["version"] == want[dist], p
        assert p["cuda_major"] == 13, p  # built for CUDA 13: from the wheel's name or its runtime
        assert p["cuda_from"], p
        if not nvidia_driver_present():
            assert p["device_ok"] is False and p["device_error"], p  # and no device is reachable here
    return pk


venv = pytest.mark.skipif(not VENV_PY.exists(), reason="no .venv (scripts/setup.sh makes it)")


@functools.cache
def venv_doctor():
    """doctor --format json on .venv's Python, asked once for the tests below (it imports
    every GPU package there: seconds)."""
    return doctor_json("--python", VENV_PY)


@venv
def test_cupy_from_pypi_is_found_and_cannot_reach_a_device():
    """CuPy (requirements/base.txt), which every set-up installs."""
    doc, r = venv_doctor()
    pk = check_gpu_wheels(doc, {"cupy": "cupy-cuda13x"})
    assert pk["cupy"]["runtime_version"].startswith("13.")  # CuPy's own runtimeGetVersion
    assert "cupy-cuda13x" in pk["cupy"]["cuda_from"]
    assert doc["python"]["virtualenv"] is True and doc["python"]["prefix"] == str(ROOT / ".venv")
    assert "no-gpu-package" not in ids(doc) and "mixed-cuda" not in ids(doc)
    if not nvidia_driver_present():
        assert ids(doc)[0] == "no-driver" and r.rc == 1
        assert "cannot-reach-device" not in ids(doc)  # the driver's absence says it all
        text = run("doctor", "--python", VENV_PY).out
        assert "cupy          cupy-cuda13x      " in text
        assert "no: CUDARuntimeError: cudaErrorInsufficientDriver" in text


@venv
def test_rapids_and_warp_from_pypi_are_found_and_cannot_reach_a_device():
    """cuDF, cuML, nx-cugraph and Warp (requirements/gpu-packages.txt), which a set-up on a
    disk too small for them leaves out, and says so."""
    skip_unless_installed("gpu-packages.txt")
    doc, r = venv_doctor()
    pk = check_gpu_wheels(doc, GPU_WHEELS)
    assert pk["warp"]["runtime_version"].startswith("13.")  # PyPI's Warp is built with CUDA 13
    assert pk["numba-cuda"]["installed"] and pk["numba-cuda"]["cuda_major"] == 13  # pulled in by cudf
    # Warp >= 1.10 has no warp.sim: a note with the way to Newton
    note = next(p for p in doc["problems"] if p["id"] == "warp-sim-removed")
    assert note["severity"] == "note" and any("pip install newton" in f for f in note["fixes"])
    assert "no-gpu-package" not in ids(doc) and "mixed-cuda" not in ids(doc)
    # every CUDA runtime the imports loaded is of one major
    assert doc["python"]["cudart"] and all(c["major"] == 13 for c in doc["python"]["cudart"])


# ---- two builds of one package ----

DUPLICATE = ROOT / ".venv" / "doctor-duplicate"


@pytest.mark.skipif(not Path(DEBIAN_PY).exists(), reason="no /usr/bin/python3")
def test_two_builds_of_one_package_are_found_with_their_fix():
    """nx-cugraph-cu12 beside nx-cugraph-cu13, the real wheels from PyPI that
    scripts/setup.sh puts in .venv/doctor-duplicate (requirements/doctor-duplicate.txt):
    the package table names one build, the duplicate-build problem both."""
    assert (DUPLICATE / "nx_cugraph_cu12-26.10.0.dist-info").is_dir(), "run scripts/setup.sh"
    doc, r = doctor_json("--python", DEBIAN_PY, env={"PYTHONPATH": str(DUPLICATE)})
    pk = packages(doc)
    assert pk["nx-cugraph"]["installed"] and pk["nx-cugraph"]["dist"] == "nx-cugraph-cu13"
    dup = [p for p in doc["problems"] if p["id"] == "duplicate-build"]
    assert len(dup) == 1 and dup[0]["severity"] == "warning", doc["problems"]
    assert dup[0]["title"].startswith("nx-cugraph is installed 2 times, as nx-cugraph-cu13 26.10.0 (CUDA 13) "
                                      "and nx-cugraph-cu12 26.10.0 (CUDA 12)"), dup[0]["title"]
    assert dup[0]["fixes"][0] == "pip uninstall -y nx-cugraph-cu13 nx-cugraph-cu12"
    assert "nx-cugraph-cu13==" in dup[0]["fixes"][1]  # no driver here: the CUDA 13 build
    # one build alone is no duplicate
    doc, r = doctor_json("--python", DEBIAN_PY)
    assert "duplicate-build" not in ids(doc)


# ---- imports that crash or hang ----

def fake_site(tmp_path, name, dist, body):
    """A real package on PYTHONPATH whose import runs body, with its metadata."""
    site = tmp_path / "site"
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text(body)
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    return site


@pytest.mark.skipif(not Path(DEBIAN_PY).exists(), reason="no /usr/bin/python3")
def test_an_import_that_crashes_is_reported_and_the_rest_still_asked(tmp_path):
    site = fake_site(tmp_path, "cupy", "cupy-cuda12x", "import os\nos.abort()\n")
    doc, r = doctor_json("--python", DEBIAN_PY, env={"PYTHONPATH": str(site)})
    pk = packages(doc)
    assert pk["cupy"]["crashed"] and "signal 6" in pk["cupy"]["crashed"], pk["cupy"]
    assert doc["python"]["runs"] == 2 and doc["python"]["failures"][0]["name"] == "cupy"
    crash = next(p for p in doc["problems"] if p["id"] == "import-crashed")
    assert crash["severity"] == "blocker"
    assert "importing cupy stops the interpreter: it was killed by signal 6" in crash["title"]
    # the packages after it were asked in the second run
    assert pk["torch"]["installed"] is False and pk["jax"]["installed"] is False and "numpy" in pk


def add_package(site, name, dist, body, version="1.0"):
    """One more real package in site (a directory made by fake_site)."""
    (site / name).mkdir()
    (site / name / "__init__.py").write_text(body)
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")


# An import that hangs where Python's own alarm cannot stop it (the signal is
# blocked, as in a C library waiting on a lock with signals masked): only
# gpuopt, from outside, can.
HANG_UNSTOPPABLE = ("import signal, time\n"
                    "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
                    "while True:\n    time.sleep(3600)\n")


# The per-package limit of the tests below: long enough for the real imports of Debian's
# scipy, pandas or scikit-learn on a busy machine, short beside --timeout.
LIMIT = 6


def timed_doctor(*args, env, timeout):
    t0 = time.monotonic()
    doc, r = doctor_json("--python", DEBIAN_PY, *args, env=env, timeout=timeout)
    return doc, r, time.monotonic() - t0


@pytest.mark.skipif(not Path(DEBIAN_PY).exists(), reason="no /usr/bin/python3")
def test_an_import_that_sleeps_forever_is_stopped_at_its_own_limit(tmp_path):
    """cupy whose import sleeps forever: stopped after --package-timeout, not --timeout, and
    said to hang, not to be missing or broken."""
    site = fake_site(tmp_path, "cupy", "cupy-cuda13x", "import time\nwhile True:\n    time.sleep(3600)\n")
    doc, r, wall = timed_doctor("--timeout", "120", "--package-timeout", LIMIT,
                                env={"PYTHONPATH": str(site)}, timeout=100)
    cupy = packages(doc)["cupy"]
    assert cupy["installed"] and cupy["asked"] and cupy["dist"] == "cupy-cuda13x", cupy
    assert cupy["timed_out"] == "import" and cupy["time_limit_s"] == LIMIT, cupy
    assert cupy["importable"] is False and cupy["import_error"] == f"importing cupy did not finish in {LIMIT} s"
    assert cupy["crashed"] is None
    hang = [p for p in doc["problems"] if p["id"] == "import-hangs"]
    assert [h["title"] for h in hang] == [f"importing cupy did not finish in {LIMIT} s"]
    assert hang[0]["severity"] == "blocker"
    assert "no-gpu-package" not in ids(doc) and "import-fails" not in ids(doc), ids(doc)
    # the probe's own alarm stopped it: one run, and the packages after cupy were asked in it
    assert doc["python"]["runs"] == 1 and doc["python"]["failures"] == []
    assert packages(doc)["torch"]["asked"] and packages(doc)["torch"]["installed"] is False
    assert wall < LIMIT + 20, wall  # the package's limit and the other imports, not --timeout's 120 s
    text = run("doctor", "--python", DEBIAN_PY, "--package-timeout", LIMIT, env={"PYTHONPATH": str(site)}).out
    assert f"cupy          cupy-cuda13x      1.0        13    import did not finish in {LIMIT} s" in text, text


@pytest.mark.skipif(not Path(DEBIAN_PY).exists(), reason="no /usr/bin/python3")
def test_an_import_that_hangs_beyond_an_alarm_is_stopped_and_the_rest_still_asked(tmp_path):
    """numba hangs with the alarm signal blocked, before cupy in doctor's order: gpuopt stops
    the interpreter at numba's own limit and asks cupy and the rest in a second run; CuPy,
    installed, is reported as such, never as missing."""
    site = fake_site(tmp_path, "numba", "numba", HANG_UNSTOPPABLE)
    add_package(site, "cupy", "cupy-cuda13x", "__version__ = '14.0'\n", version="14.0")
    doc, r, wall = timed_doctor("--timeout", "120", "--package-timeout", LIMIT,
                                env={"PYTHONPATH": str(site)}, timeout=100)
    pk = packages(doc)
    numba = pk["numba"]
    assert numba["installed"] and numba["dist"] == "numba" and numba["version"] == "1.0", numba
    assert numba["timed_out"] == "import" and numba["time_limit_s"] == LIMIT and numba["crashed"] is None
    assert numba["import_error"] == f"importing numba did not finish in {LIMIT} s"
    failures = doc["python"]["failures"]
    assert [f["name"] for f in failures] == ["numba"] and failures[0]["timed_out"] == "import"
    assert doc["python"]["runs"] == 2  # stopped from outside, then asked again without it
    # cupy, after numba, was imported for real in the second run
    cupy = pk["cupy"]
    assert cupy["installed"] and cupy["asked"] and cupy["importable"] and cupy["dist"] == "cupy-cuda13x"
    assert cupy["device_ok"] is False and "AttributeError" in cupy["device_error"], cupy
    assert pk["jax"]["asked"] and pk["jax"]["installed"] is False
    hang = [p for p in doc["problems"] if p["id"] == "import-hangs"]
    assert [h["title"] for h in hang] == [f"importing numba did not finish in {LIMIT} s"]
    assert hang[0]["severity"] == "warning"
    assert any("faulthandler" in f and "import numba" in f for f in hang[0]["fixes"]), hang
    assert "no-gpu-package" not in ids(doc) and "import-crashed" not in ids(doc), ids(doc)
    assert wall < LIMIT + 2 + 25, wall  # about the package's limit, not --timeout's 120 s


@pytest.mark.skipif(not Path(DEBIAN_PY).exists(), reason="no /usr/bin/python3")
def test_a_device_check_that_hangs_is_told_apart_from_an_import_that_hangs(tmp_path):
    """cupy imports, but its first CUDA call (cupy.cuda.runtime.runtimeGetVersion, what
    doctor's device check calls first) waits forever with the alarm blocked, as on a wedged
    driver: stopped at the package's limit, during its device check, and said so."""
    site = fake_site(tmp_path, "cupy", "cupy-cuda13x", "__version__ = '14.0'\nfrom . import cuda\n")
    (site / "cupy" / "cuda").mkdir()
    (site / "cupy" / "cuda" / "__init__.py").write_text("from . import runtime\n")
    (site / "cupy" / "cuda" / "runtime.py").write_text("def runtimeGetVersion():\n" + "".join(
        "    " + line + "\n" for line in HANG_UNSTOPPABLE.splitlines()))
    doc, r, wall = timed_doctor("--timeout", "120", "--package-timeout", LIMIT,
                                env={"PYTHONPATH": str(site)}, timeout=100)
    cupy = packages(doc)["cupy"]
    assert cupy["installed"] and cupy["importable"] and cupy["import_error"] is None, cupy
    assert cupy["timed_out"] == "device check" and cupy["time_limit_s"] == LIMIT
    assert cupy["device_ok"] is False and cupy["device_error"] == f"the device check did not finish in {LIMIT} s"
    assert [f["timed_out"] for f in doc["python"]["failures"]] == ["device check"]
    hang = next(p for p in doc["problems"] if p["id"] == "device-check-hangs")
    assert hang["severity"] == "blocker" and hang["title"].startswith("cupy imports, but its device check")
    assert "import-hangs" not in ids(doc) and "no-gpu-package" not in ids(doc), ids(doc)
    assert wall < LIMIT + 2 + 25, wall


@pytest.mark.skipif(not Path(DEBIAN_PY).exists(), reason="no /usr/bin/python3")
def test_when_the_whole_time_runs_out_the_packages_not_asked_are_not_called_missing(tmp_path):
    """The same hang with a total (--timeout) shorter than the package limit: the probe
    cannot come to cupy; doctor says cupy is installed and was not asked, never that no GPU
    library is installed."""
    site = fake_site(tmp_path, "numba", "numba", HANG_UNSTOPPABLE)
    add_package(site, "cupy", "cupy-cuda13x", "__version__ = '14.0'\n", version="14.0")
    doc, r, wall = timed_doctor("--timeout", "10", env={"PYTHONPATH": str(site)}, timeout=60)
    pk = packages(doc)
    assert "no-gpu-package" not in ids(doc), doc["problems"]
    cupy = pk["cupy"]
    assert cupy["installed"] and cupy["asked"] is False and cupy["dist"] == "cupy-cuda13x", cupy
    assert cupy["version"] == "14.0" and cupy["cuda_major"] == 13
    assert pk["torch"]["installed"] is False  # known from the metadata, read before any import
    assert pk["numba"]["timed_out"] == "import" and 0 < pk["numba"]["time_limit_s"] <= 10, pk["numba"]
    hang = next(p for p in doc["problems"] if p["id"] == "import-hangs")
    assert hang["fixes"][-1].startswith("gpuopt doctor --timeout 30   # the time for all packages ran out")
    incomplete = next(p for p in doc["problems"] if p["id"] == "probe-incomplete")
    assert "cupy" in incomplete["title"] and "(10 s)" in incomplete["title"], incomplete
    assert incomplete["fixes"] == ["gpuopt doctor --timeout 30"]
    assert wall < 10 + 10, wall
    text = run("doctor", "--python", DEBIAN_PY, "--timeout", "10", env={"PYTHONPATH": str(site)}).out
    assert "cupy          cupy-cuda13x      14.0       13    not asked: the probe's time ran out first" in text
    assert "not installed: dask, numba-cuda" in text and "no GPU library" not in text


# Forged answers, written by a package at import to every descriptor it can find and to
# every one below 256, plain and after every word of its argv and whatever stdin gives it
# (in case gpuopt's token were there); what it wrote where is kept in FORGER_LOG.
FORGER = r"""
import json, os, sys
forged = [
    {"event": "package", "name": "cuml", "installed": True, "dist": "cuml-cu13", "version": "9.9",
     "cuda_major": 13, "importable": True, "device_ok": True, "device_count": 1},
    {"event": "python", "version": "9.9.9", "executable": "/forged"},
    {"event": "plan", "packages": [{"name": "cudf", "installed": True, "dist": "cudf-cu13",
                                    "version": "9.9"}]},
    {"event": "failures"}, {"event": "done"},
]
try:
    stolen = os.read(0, 256).decode("ascii", "replace").strip()
except OSError:
    stolen = ""
prefixes = ["", "\n", stolen + " "] + [w[:64] + " " for w in sys.argv]
fds = sorted({int(f) for f in os.listdir("/proc/self/fd")} | set(range(256)))
hit = {}
for fd in fds:
    try:
        target = os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        continue
    for p in prefixes:
        for e in forged:
            try:
                os.write(fd, (p + json.dumps(e) + "\n").encode())
                hit[fd] = target
            except OSError:
                pass
with open(os.environ["FORGER_LOG"], "w") as f:
    json.dump({"stolen": stolen, "hit": hit}, f)
__version__ = "2024.1"
"""

# Junk printed at import: event-shaped lines, a line without its end, a flood.
JUNK = r"""
import os, sys
print('{"event": "package", "name": "cugraph", "installed": true, "importable": true}')
sys.stdout.write('{"event": "done"')
sys.stderr.write('{"event": "python", "version": "0.0.1"}\n')
os.write(1, b'{"event": "begin", "name": "numpy"}\n' * 20000)
os.write(2, b"\xff\xfe not text \x00" * 1000)
sys.stdout.flush()
__version__ = "0.61"
"""


@pytest.mark.skipif(not Path(DEBIAN_PY).exists(), reason="no /usr/bin/python3")
def test_packages_that_forge_answers_or_print_junk_do_not_change_them(tmp_path):
    """dask writes forged probe answers (a cuml 9.9 that can use the GPU, a Python 9.9.9,
    "done") to every descriptor it finds, gpuopt's channel among them; numba prints junk.
    doctor's answer is that of the same interpreter without them, but for the two packages
    themselves, found and imported."""
    site = fake_site(tmp_path, "dask", "dask", FORGER)
    add_package(site, "numba", "numba", JUNK, version="0.61")
    log = tmp_path / "forger.json"
    doc, r = doctor_json("--python", DEBIAN_PY, env={"PYTHONPATH": str(site), "FORGER_LOG": str(log)})
    wrote = json.loads(log.read_text())
    assert {"1", "2"} <= set(wrote["hit"]), wrote  # the forger did run
    clean, _ = doctor_json("--python", DEBIAN_PY)
    assert doc["python"]["version"] == clean["python"]["version"] != "9.9.9"
    assert doc["python"]["executable"] == clean["python"]["executable"]
    pk, want = packages(doc), packages(clean)
    assert pk["cuml"]["installed"] is False and pk["cudf"]["installed"] is False, pk["cuml"]
    assert pk["cugraph"]["installed"] is False
    for name in ("dask", "numba"):
        assert pk[name]["installed"] and pk[name]["importable"] and pk[name]["asked"], pk[name]
        assert pk[name]["import_error"] is None
    for name in set(want) - {"dask", "numba"}:
        assert pk[name] == want[name], name
    assert ids(doc) == ids(clean) and doc["python"]["runs"] == 1 and doc["python"]["failures"] == []
    # it did write into gpuopt's channel (a socket), and stdin was no longer that when it looked
    assert any(t.startswith("socket:") for t in wrote["hit"].values()), wrote
    assert wrote["stolen"] == "", wrote
    text = run("doctor", "--python", DEBIAN_PY, env={"PYTHONPATH": str(site), "FORGER_LOG": str(log)}).out
    assert "cuml-cu13" not in text and "9.9.9" not in text and "/forged" not in text


# ---- the H200 ----

def test_h200_report_matches_pip_list_and_the_packages_own_reports():
    """tests/e2e/fixtures/h200_doctor.json and h200_pip_list.json: one run of
    scripts/gpu_doctor_fit.sh on the H200 (see fixtures/README.md)."""
    doc = json.loads((FIXTURES / "h200_doctor.json").read_text())
    assert set(doc) == TOP_KEYS and doc["ready"] is True and doc["counts"]["blockers"] == 0
    dev = doc["gpu"]["devices"][0]
    assert "H200" in dev["name"] and dev["compute_capability"] == "9.0"
    assert dev["pcie"]["max_generation"] == 5 and dev["pcie"]["max_width"] == 16
    assert dev["persistence_mode"] is not None and dev["ecc"]["enabled"] is True
    assert dev["mig_mode"]["enabled"] is False and dev["processes"] == []
    assert doc["gpu"]["driver_version"].startswith("580.") and doc["gpu"]["cuda_driver_version"] == "13.0"
    pip = {p["name"].lower(): p["version"] for p in json.loads((FIXTURES / "h200_pip_list.json").read_text())}
    pk = packages(doc)
    installed = [p for p in pk.values() if p["installed"]]
    assert len(installed) >= 10
    for p in installed:  # doctor's table is what pip says is there
        assert pip.get(p["dist"].lower()) == p["version"], p
    table = {p["name"]: p["dists"] for p in json.load(open(ROOT / "data" / "doctor" / "packages.json"))["packages"]}
    for p in pk.values():
        if not p["installed"]:
            assert not any(d.lower() in pip for d in table[p["name"]]), p["name"]
    for name in ["cupy", "torch", "jax", "numba-cuda"]:
        assert pk[name]["gpu"] and pk[name]["cuda_major"] == 13 and pk[name]["device_ok"] is True, pk[name]
        assert pk[name]["device_count"] == 1
    # and what the packages themselves said there (h200_doctor_fit.log)
    log = (FIXTURES / "h200_doctor_fit.log").read_text()
    assert f"cupy {pk['cupy']['version']} runtime 13020 devices 1" in log
    assert pk["cupy"]["runtime_version"] == "13.2"
    assert f"torch {pip['torch']}" in log and "cuda 13.0 available True 1" in log
    assert pk["torch"]["runtime_version"] == "13.0"
    assert f"jax {pk['jax']['version']} [CudaDevice(id=0)]" in log
    assert "numba.cuda True (13, 0)" in log and pk["numba-cuda"]["runtime_version"] == "13.0"
