"""`gpuopt fit`: the surface and exit codes; the plain "no NVIDIA GPU"
answer on a machine without a driver; the working set from real .npy files
written by numpy (headers only), dtype and shape, sizes; the answers and
verdicts on the ceilings measured on the H200 (tests/e2e/fixtures/
h200_ceilings.json, read with --ceilings); and the recorded H200 run: its
report, and its rates against the same copies timed with CuPy in the same
run (h200_fit_vs_cupy.json)."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, run

FIXTURES = ROOT / "tests" / "e2e" / "fixtures"
CEILINGS = FIXTURES / "h200_ceilings.json"
GIB = 1 << 30
PY = sys.executable  # the interpreter running the tests: it has numpy
HAVE_NUMPY = subprocess.run([PY, "-c", "import numpy"], capture_output=True).returncode == 0
TOP_KEYS = {"tool", "version", "schema", "error", "no_gpu", "gpu_record", "measure_s", "gpus", "answer"}


def nvidia_driver_present():
    return Path("/dev/nvidiactl").exists() or Path("/proc/driver/nvidia").exists()


def fit(*args, **kw):
    return run("fit", *args, **kw)


def fit_json(*args, expect_rc=0):
    r = fit("--format", "json", *args)
    assert r.rc == expect_rc, r
    doc = r.json()
    assert set(doc) == TOP_KEYS and doc["schema"] == "gpuopt-fit/1"
    return doc


def h200():
    return json.loads(CEILINGS.read_text())


def np_save(path, code):
    subprocess.run([PY, "-c", f"import numpy as np; np.save({str(path)!r}, {code})"], check=True)


# ---- the surface ----

def test_help_is_routed_and_complete():
    r = fit("--help")
    assert r.rc == 0 and r.out.startswith("Usage: gpuopt fit")
    assert run("help", "fit").out == r.out
    for opt in ["--bytes", "--dtype", "--shape", "--out-bytes", "--temp-factor", "--cpu-seconds",
                "--min-speedup", "--refresh", "--quick", "--trials", "--max-bytes", "--gpu",
                "--no-peers", "--python", "--ceilings", "--timeout", "--format", "--output",
                "--verbose", "--quiet", "Exit codes", "spin kernel", "pageable", "pinned"]:
        assert opt in r.out, opt
    # what the options take, as the parsing checks it
    assert "given again, the sizes add up" in r.out
    assert "(default 3; 1 to 100)" in r.out and "(0 to 1e7)" in r.out and "1 to 1e6" in r.out


@pytest.mark.parametrize("args, message", [
    (["--bogus"], "unknown option '--bogus'"),
    (["--bytes", "8 parsecs"], "--bytes: '8 parsecs' is not a size"),
    (["--bytes", "0"], "--bytes: '0' is not a size of at least 1 bytes"),
    (["--trials", "2"], "--trials: '2' is not a whole number from 3 to 1000"),
    (["--temp-factor", "0.5"], "--temp-factor: '0.5' is not a number from 1 to 100"),
    (["--cpu-seconds", "-1"], "--cpu-seconds: '-1' is not a number from 0 to 1e+07"),
    # out of range or not finite: a usage error, never an answer from absurd arithmetic
    (["--bytes", "1GiB", "--temp-factor", "1e300"], "--temp-factor: '1e300' is not a number from 1 to 100"),
    (["--bytes", "1GiB", "--temp-factor", "101"], "--temp-factor: '101' is not a number from 1 to 100"),
    (["--bytes", "1GiB", "--temp-factor", "inf"], "--temp-factor: 'inf' is not a number from 1 to 100"),
    (["--bytes", "1GiB", "--temp-factor", "nan"], "--temp-factor: 'nan' is not a number from 1 to 100"),
    (["--bytes", "1GiB", "--cpu-seconds", "1e300"], "--cpu-seconds: '1e300' is not a number from 0 to 1e+07"),
    (["--bytes", "1GiB", "--min-speedup", "1e300"], "--min-speedup: '1e300' is not a number from 1 to 1e+06"),
    (["--timeout", "1e300"], "--timeout: '1e300' is not a number from 1 to 1e+07"),
    (["--bytes", "1e19", "--bytes", "1e19"], "--bytes: '1e19' makes the sizes given add up to more than 16 EiB"),
    (["--bytes", "1e19", "--dtype", "float64", "--shape", "2000000000000000000,1"],
     "the working set adds up to more than 16 EiB"),
    (["--format", "csv"], "'csv' is not text or json"),
    (["--dtype", "float32"], "--dtype needs --shape"),
    (["--dtype", "float32", "--shape", "10", "--dtype", "int8"],
     "--dtype is given 2 times and --shape 1 times: each array is one --dtype with one --shape"),
    (["--dtype", "float32", "--shape", "10,abc"], "--shape: '10,abc' is not a shape"),
    (["--dtype", "object", "--shape", "10"], "--dtype: 'object' is not a numeric dtype"),
    (["--ceilings", "/nonexistent/c.json"], "cannot read '/nonexistent/c.json'"),
    (["--ceilings", str(CEILINGS), "--refresh"], "--ceilings takes the ceilings from a file"),
    (["--bytes"], "needs a value"),
])
def test_usage_and_input_errors_exit_2(args, message):
    r = fit(*args)
    assert r.rc == 2 and r.out == "", r
    assert r.err.startswith("gpuopt: fit: ") and message in r.err, r


def test_bad_npy_files_are_input_errors(tmp_path):
    bad = tmp_path / "not.npy"
    bad.write_text("hello")
    r = fit(bad)
    assert r.rc == 2 and f"cannot read '{bad}': header is not a .npy header" in r.err, r
    r = fit(tmp_path / "missing.npy")
    assert r.rc == 2 and "No such file or directory" in r.err
    r = fit(tmp_path)
    assert r.rc == 2 and "is a directory" in r.err
    damaged = tmp_path / "damaged.json"
    damaged.write_text(CEILINGS.read_text().replace('"h2d_pinned"', '"h2d_pinnedx"'))
    r = fit("--ceilings", damaged)
    assert r.rc == 2 and f"'{damaged}' is not a ceilings file of gpuopt fit: transfers.h2d_pinned" in r.err, r


def test_npy_paths_that_are_not_regular_files(tmp_path):
    """/dev/zero and a FIFO have no size: said for what they are, at once, never
    "an empty file" (and a FIFO nobody writes to is not waited on)."""
    r = fit("--ceilings", CEILINGS, "/dev/zero")
    assert r.rc == 2 and r.out == "", r
    assert r.err == ("gpuopt: fit: cannot read '/dev/zero': a character device, not a .npy file "
                     "(fit reads the header of a regular .npy file)\n"), r
    fifo = tmp_path / "pipe.npy"
    os.mkfifo(fifo)
    started = time.monotonic()
    r = fit("--ceilings", CEILINGS, fifo)
    assert r.rc == 2 and f"cannot read '{fifo}': a named pipe (FIFO), not a .npy file" in r.err, r
    assert time.monotonic() - started < 5
    # a real empty file still is one
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    r = fit("--ceilings", CEILINGS, empty)
    assert r.rc == 2 and f"cannot read '{empty}': empty file: not a .npy file" in r.err, r


@pytest.mark.skipif(not HAVE_NUMPY, reason="no numpy to write .npy files")
@pytest.mark.parametrize("code, message", [
    ("np.zeros(3, dtype=[('a', 'f4'), ('b', 'i4')])",
     "it holds a structured array (a 'descr' list of fields), which gpuopt fit does not read"),
    ("np.array(['ab', 'cd'])",
     "dtype '<U2' is not supported (gpuopt fit reads bool, integer, float and complex arrays)"),
])
def test_npy_errors_name_fit_not_verify(tmp_path, code, message):
    """The .npy header reader is shared with verify: its errors name the command reading."""
    f = tmp_path / "x.npy"
    np_save(f, code)
    r = fit("--ceilings", CEILINGS, f)
    assert r.rc == 2 and r.err == f"gpuopt: fit: cannot read '{f}': {message}\n", r
    assert "verify" not in r.err


def test_huge_page_shares_are_shown_where_recorded(tmp_path):
    # the fixture was measured before fit recorded them: no line, null in JSON
    r = fit("--ceilings", CEILINGS)
    assert r.rc == 0 and "huge pages" not in r.out, r
    doc = json.loads(CEILINGS.read_text())
    doc["huge_page_share"] = {"pageable": 1.0, "first_touch_h2d": 0.5, "first_touch_d2h": None}
    f = tmp_path / "c.json"
    f.write_text(json.dumps(doc))
    r = fit("--ceilings", f)
    assert r.rc == 0 and ("pageable memory in huge pages: 100% of the reused buffer; first touch 50% "
                          "host→device, ? device→host") in r.out, r
    doc["huge_page_share"]["pageable"] = -0.5
    f.write_text(json.dumps(doc))
    r = fit("--ceilings", f)
    assert r.rc == 2 and "huge_page_share.pageable: must be a number from 0 to 1" in r.err, r


# ---- no driver ----

@pytest.mark.skipif(nvidia_driver_present(), reason="this machine has an NVIDIA driver")
def test_no_driver_is_said_plainly():
    r = fit()
    assert r.rc == 1 and r.out == "", r
    assert r.err.startswith("gpuopt: fit: no NVIDIA GPU: NVML: libnvidia-ml.so.1:") and "libcuda.so.1" in r.err
    r = fit("--bytes", "8GiB", "--cpu-seconds", "2")
    assert r.rc == 1 and "no NVIDIA GPU" in r.err
    doc = fit_json(expect_rc=1)
    assert doc["no_gpu"] is True and doc["error"].startswith("no NVIDIA GPU") and doc["gpus"] == []
    assert doc["gpu_record"]["found"] is False


# ---- the working set ----

@pytest.mark.skipif(not HAVE_NUMPY, reason="no numpy to write .npy files")
def test_npy_headers_give_the_working_set(tmp_path):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np_save(a, "np.zeros((1000, 64), np.float32)")
    np_save(b, "np.asfortranarray(np.zeros((3, 5, 7), np.complex128))")
    doc = fit_json("--ceilings", CEILINGS, a, b)
    arrays = doc["answer"]["arrays"]
    assert [x["label"] for x in arrays] == [str(a), str(b)]
    assert arrays[0]["dtype"] == "float32" and arrays[0]["shape"] == "(1000, 64)"
    assert arrays[0]["bytes"] == 1000 * 64 * 4
    assert arrays[1]["dtype"] == "complex128" and arrays[1]["bytes"] == 3 * 5 * 7 * 16
    assert doc["answer"]["in_bytes"] == 1000 * 64 * 4 + 3 * 5 * 7 * 16
    # with --bytes and a dtype and shape too: all of it adds up
    doc = fit_json("--ceilings", CEILINGS, a, "--bytes", "1MiB", "--dtype", "int8", "--shape", "10,10")
    assert doc["answer"]["in_bytes"] == 256000 + (1 << 20) + 100


def test_dtype_and_shape_pairs_given_again_add_up():
    """A second --dtype/--shape pair is one more array, not a replacement."""
    doc = fit_json("--ceilings", CEILINGS, "--dtype", "float32", "--shape", "1000",
                   "--dtype", "int8", "--shape", "4")
    arrays = doc["answer"]["arrays"]
    assert [(x["dtype"], x["bytes"]) for x in arrays] == [("float32", 4000), ("int8", 4)]
    assert doc["answer"]["in_bytes"] == 4004


def test_bytes_given_again_add_up():
    """--bytes given twice is two parts of the working set (the README and --help say all of
    it adds up), not the last one alone."""
    doc = fit_json("--ceilings", CEILINGS, "--bytes", "1GiB", "--bytes", "2GiB", "--bytes", "512MiB")
    assert doc["answer"]["in_bytes"] == 3 * GIB + (512 << 20)
    assert [x["bytes"] for x in doc["answer"]["arrays"]] == [3 * GIB + (512 << 20)]
    r = fit("--ceilings", CEILINGS, "--bytes", "1GiB", "--bytes", "2GiB")
    assert r.rc == 0 and "Working set: 3 GiB in (--bytes)" in r.out, r


@pytest.mark.skipif(not HAVE_NUMPY, reason="no numpy to write .npy files")
def test_the_data_is_not_read(tmp_path):
    """A 6 GiB .npy file that is almost all holes: fit answers at once."""
    big = tmp_path / "big.npy"
    subprocess.run([PY, "-c", f"""
import numpy as np
m = np.lib.format.open_memmap({str(big)!r}, mode='w+', dtype=np.float64, shape=(786432, 1024))
del m"""], check=True)
    assert big.stat().st_size > 6 * GIB and big.stat().st_blocks * 512 < 64 << 20
    doc = fit_json("--ceilings", CEILINGS, big)
    assert doc["answer"]["in_bytes"] == 786432 * 1024 * 8
    assert doc["answer"]["arrays"][0]["shape"] == "(786432, 1024)"


# ---- answers on the H200's ceilings ----

def test_answers_on_the_h200():
    c = h200()
    doc = fit_json("--ceilings", CEILINGS, "--bytes", "8GiB", "--cpu-seconds", "2")
    a = doc["answer"]
    assert a["fits"] is True and a["in_bytes"] == a["out_bytes"] == 8 * GIB
    assert a["need_bytes"] == 24 * GIB + (512 << 20) and a["free_bytes"] == c["memory"]["free_bytes"]
    pinned_1g = next(p for p in c["transfers"]["h2d_pinned"] if p["bytes"] == GIB)
    assert abs(a["seconds"]["in_pinned"] - 8 * pinned_1g["seconds"]) < 1e-9
    best = a["best_speedup"]
    assert best["pinned"] > best["pageable"] > best["fresh_pageable"]
    assert a["verdict"] in ("room to gain", "can pay only if the data stays on the device")
    g = doc["gpus"][0]
    assert g["published"]["name"] == "H200 SXM 141GB" and g["published"]["memory_gbps"] == 4800
    # the file's ceilings, and the huge-page shares it was written without, unknown
    unknown = {"huge_page_share": {"pageable": None, "first_touch_h2d": None, "first_touch_d2h": None}}
    assert g["ceilings"] == {**c, **unknown} and g["source"].startswith(f"read from {CEILINGS}")
    # the text says the same
    r = fit("--ceilings", CEILINGS, "--bytes", "8GiB", "--cpu-seconds", "2")
    assert r.rc == 0, r
    assert "host→device, pinned" in r.out and "published (H200 SXM 141GB): memory 4800 GB/s" in r.out
    assert "Working set: 8 GiB in (--bytes)" in r.out and "\nverdict: " in r.out
    assert "fits: needs 24.5 GiB (×3 for temporaries, and the CUDA context) of " in r.out


@pytest.mark.parametrize("args, verdict, rc", [
    (["--bytes", "1MiB", "--cpu-seconds", "0.000005"], "cannot pay", 1),
    (["--bytes", "8GiB", "--cpu-seconds", "0.4"], "can pay only if the data stays on the device", 0),
    (["--bytes", "8GiB", "--cpu-seconds", "60"], "room to gain", 0),
    (["--bytes", "8GiB", "--cpu-seconds", "60", "--min-speedup", "1000"],
     "can pay only if the data stays on the device", 0),
    (["--bytes", "400GiB", "--cpu-seconds", "10"], "cannot pay", 1),
    (["--bytes", "400GiB", "--cpu-seconds", "1000"], "room to gain", 0),
])
def test_verdicts_and_exit_codes(args, verdict, rc):
    doc = fit_json("--ceilings", CEILINGS, *args, expect_rc=rc)
    assert doc["answer"]["verdict"] == verdict, doc["answer"]["why"]
    r = fit("--ceilings", CEILINGS, *args)
    assert r.rc == rc and f"\nverdict: {verdict} — " in r.out, r


def test_too_big_gets_a_chunk_and_the_pointer_to_dask():
    doc = fit_json("--ceilings", CEILINGS, "--dtype", "float32", "--shape", "100000000,1000")
    a = doc["answer"]
    assert a["fits"] is False and a["verdict"] is None  # no --cpu-seconds, no verdict
    ch = a["chunk"]
    assert ch["rows"] and ch["bytes"] == ch["rows"] * 4000
    assert ch["bytes"] * 3 + (512 << 20) <= a["free_bytes"]
    assert ch["chunks"] * ch["bytes"] >= a["in_bytes"] and "Dask" in ch["several_gpus"]
    r = fit("--ceilings", CEILINGS, "--dtype", "float32", "--shape", "100000000,1000")
    assert "does not fit" in r.out and "rows of the first axis" in r.out and "LocalCUDACluster" in r.out
    assert "give --cpu-seconds" in r.out


def test_no_chunk_fits_when_the_context_takes_the_free_memory(tmp_path):
    """A GPU with less free memory than the CUDA context needs: no chunk of 0 B, no "room to
    gain" through chunks that cannot exist."""
    doc = h200()
    doc["memory"]["free_bytes"] = 100 << 20
    c = tmp_path / "busy.json"
    c.write_text(json.dumps(doc))
    a = fit_json("--ceilings", c, "--bytes", "1GiB", "--cpu-seconds", "100", expect_rc=1)["answer"]
    assert a["fits"] is False and a["verdict"] == "cannot pay", a
    assert a["why"] == ("not even a chunk of it fits: the GPU has 100 MiB free, and the CUDA context "
                        "alone needs 512 MiB")
    r = fit("--ceilings", c, "--bytes", "1GiB", "--cpu-seconds", "100")
    assert r.rc == 1 and "0 B" not in r.out and "room to gain" not in r.out, r
    assert "in chunks: none fits with its temporaries beside the CUDA context" in r.out


def test_out_bytes_and_temp_factor():
    a = fit_json("--ceilings", CEILINGS, "--bytes", "40GiB", "--out-bytes", "1KiB")["answer"]
    assert a["out_bytes"] == 1024 and a["seconds"]["out_pinned"] < 1e-3 and a["fits"]
    a = fit_json("--ceilings", CEILINGS, "--bytes", "40GiB", "--temp-factor", "4")["answer"]
    assert a["fits"] is False and a["need_bytes"] == 160 * GIB + (512 << 20)


def test_verbose_lists_every_size_and_the_method():
    r = fit("--ceilings", CEILINGS, "-v")
    assert r.rc == 0, r
    for size in ["4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB", "4 MiB", "16 MiB", "64 MiB", "256 MiB", "1 GiB"]:
        assert f" {size}" in r.out.split("\n")[2], size
    assert "method: CUDA driver API" in r.out and "spin kernel" in r.out
    assert "published peaks from: NVIDIA H200" in r.out


# ---- the recorded H200 run ----

def test_h200_run_was_measured_there():
    """tests/e2e/fixtures/h200_fit.json: gpuopt fit --python python3 on the
    H200 (see fixtures/README.md)."""
    doc = json.loads((FIXTURES / "h200_fit.json").read_text())
    assert doc["error"] is None and doc["no_gpu"] is False
    g = doc["gpus"][0]
    assert g["source"] == "measured now" and "H200" in g["name"] and g["link"]["name"] == "PCIe Gen5 x16"
    c = g["ceilings"]
    assert c == h200()  # the cache file is what the run reported
    assert c["driver_version"] == doc["gpu_record"]["driver_version"]
    assert c["gpu"]["uuid"] == doc["gpu_record"]["devices"][0]["uuid"]
    for kind in ["h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"]:
        pts = c["transfers"][kind]
        assert [p["bytes"] for p in pts] == [4096 << (2 * k) for k in range(10)]
        assert all(p["trials"] == 7 for p in pts)
    top = c["transfers"]["h2d_pinned"][-1]["gbps"]
    assert 0.8 * g["link"]["gbps_each_way"] < top < g["link"]["gbps_each_way"]  # near PCIe Gen5 x16
    assert c["transfers"]["h2d_pinned"][-1]["cv"] < 0.05
    assert c["d2d"]["counted"] == "read+write" and 0.8 * 4800 < c["d2d"]["gbps"] < 4800
    assert c["python"]["via"].startswith("cupy ") and c["python"]["op"]["us"] > c["latency_us"]["launch"]["us"]
    assert "spin kernel" in c["method"] and "nvcc at build time" in c["method"]


def test_h200_rates_against_cupy():
    """tests/e2e/fixtures/h200_fit_vs_cupy.json: bench/fit_vs_cupy.py in the
    same run, three rounds of gpuopt fit and CuPy taking turns, medians over
    the rounds. Pinned and device-to-device copies agree within 4% at every
    size from 1 MiB (gpuopt 0-3.4% higher at 11 of 12 pinned sizes). Pageable
    copies do not all meet the 10% target: gpuopt measured 0.5-20% more than
    CuPy's cudaMemcpyAsync of NumPy arrays, beyond 10% at 6 of 12 sizes,
    while each tool's own rounds spread by 10-25% on that VM; first-touch
    device->host is 28% above cupy.asnumpy, which also allocates its array."""
    doc = json.loads((FIXTURES / "h200_fit_vs_cupy.json").read_text())
    s, rows = doc["summary"], doc["rows"]
    big = [r for r in rows if r["bytes"] >= 1 << 20]
    assert s["rounds"] == 3 and s["sizes_checked"] == len(big) == 27
    assert s["within_10pct"] == sum(abs(r["ratio"] - 1) <= 0.10 for r in big)
    assert s["gpuopt_higher"] == sum(r["ratio"] > 1 for r in big)
    for r in big:
        assert len(r["gpuopt_rounds"]) == len(r["cupy_rounds"]) == 3
        if "pinned" in r["kind"] or r["kind"].startswith("d2d"):
            assert abs(r["ratio"] - 1) < 0.04, r  # the same copies, the same rate
        elif r["kind"].startswith("first touch"):
            assert 0.9 < r["ratio"] < 1.3, r
        else:  # pageable: within 20%, and inside what the rounds themselves spread
            assert 0.95 < r["ratio"] < 1.2, r
            spread = max(r["gpuopt_rounds"] + r["cupy_rounds"]) / min(r["gpuopt_rounds"] + r["cupy_rounds"])
            assert r["ratio"] <= spread, r
    assert s["within_10pct"] >= 18  # the pinned and device copies, and half the pageable ones


# ---- on a machine with a GPU (the H200 run of scripts/gpu_doctor_fit.sh) ----

gpu_only = pytest.mark.skipif(not nvidia_driver_present(), reason="no NVIDIA driver here")


@gpu_only
def test_measures_caches_and_measures_again(tmp_path):
    quick = ["--quick", "--max-bytes", "16MiB", "--no-peers"]
    doc = fit_json(*quick)
    g = doc["gpus"][0]
    assert g["source"] == "measured now" and g["error"] is None, g
    c = g["ceilings"]
    assert [p["bytes"] for p in c["transfers"]["h2d_pinned"]] == [4096, 65536, 1 << 20, 16 << 20]
    assert all(p["trials"] == 5 for k in c["transfers"] for p in c["transfers"][k])
    assert c["d2d"]["bytes"] == 16 << 20 and c["first_touch"]["d2h_pageable"]["bytes"] == 16 << 20
    cache = Path(g["cache_path"])
    assert cache.exists() and json.loads(cache.read_text()) == c
    again = fit_json(*quick)["gpus"][0]
    assert again["source"].startswith("cached (measured ") and again["ceilings"] == c
    assert fit_json(*quick, "--refresh")["gpus"][0]["source"] == "measured now"
    # the cache of another driver is stale: measured again, and said so
    old = json.loads(cache.read_text())
    old["driver_version"] = "1.0"
    cache.write_text(json.dumps(old))
    g = fit_json(*quick)["gpus"][0]
    assert g["source"] == "measured now" and "stale" in g["cache_note"] and "1.0" in g["cache_note"]
    # --gpu names one that is there, and not one that is not
    assert fit_json(*quick, "--gpu", str(g["index"]))["gpus"][0]["index"] == g["index"]
    r = fit(*quick, "--gpu", "4095")
    assert r.rc == 2 and "--gpu 4095: this machine has no such GPU" in r.err


@gpu_only
def test_doctor_with_the_gpu(tmp_path):
    r = run("doctor", "--no-python", "--format", "json")
    doc = r.json()
    assert doc["gpu"]["found"] is True and r.rc == 0, r
    dev = doc["gpu"]["devices"][0]
    for key in ["pcie", "persistence_mode", "mig_mode", "ecc", "processes", "pci_bus_id", "cuda_index"]:
        assert key in dev and dev[key] is not None, key
    text = run("doctor", "--no-python").out
    assert text.startswith("gpuopt doctor: GPU work can start here") and f"GPU 0: {dev['name']}" in text
