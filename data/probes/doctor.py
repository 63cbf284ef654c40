# The Python side of `gpuopt doctor`: run as `PY -c <channel.py + this file>
# TABLE SKIP PACKAGE_S` by src/gpu/sysinfo.c (sysinfo_python_probe), never
# imported by gpuopt. TABLE is the JSON list of packages from
# data/doctor/packages.json; SKIP a comma-separated list of names not to
# import again (they crashed or hung a run before); PACKAGE_S the seconds
# one package's import and device check may take. The answers go to gpuopt
# through emit() of data/probes/channel.py, which runs first (a socket only
# gpuopt reads, each message with a per-run token): whatever the packages
# print, or write to any descriptor, is not taken for an answer. One JSON
# object per message, sent at once, so that a crash or a hang in one
# package's import leaves everything before it:
#   {"event": "python", ...}     the interpreter
#   {"event": "dists", ...}      installed distributions that carry a CUDA major
#   {"event": "plan", "packages": [{"name", "installed", "dist", "version",
#    "cuda_major", "cuda_from"}]} every package of TABLE, before any import
#   {"event": "begin", "name": N}, {"event": "check", "name": N} (imported;
#    its device check starts), then {"event": "package", "name": N, ...}
#   {"event": "libs", ...}       CUDA runtime libraries loaded in this process
#   {"event": "done"}
# Time limits: gpuopt stops the interpreter when a package's "package" event
# has not come PACKAGE_S (plus a grace) after its "begin", and runs the probe
# again without it. Inside, an alarm at PACKAGE_S stops first an import or a
# device check that Python can interrupt, and the event says so
# ("timed_out": "import" or "device check", "time_limit_s"); a hang in C code
# that holds the interpreter is left to gpuopt.
# Needs Python 3.8+ (importlib.metadata). Nothing is left behind: no bytecode
# is written, and Warp's kernel cache goes to a temporary directory.
import atexit
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX: no 75% grab
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")



def error_text(e):
    text = "%s: %s" % (type(e).__name__, e)
    return " ".join(text.split())[:400]


try:
    from importlib import metadata
except ImportError:  # Python 3.7 and older
    metadata = None

table = json.loads(sys.argv[1]) if len(sys.argv) > 1 else []
skip = set(filter(None, sys.argv[2].split(","))) if len(sys.argv) > 2 else set()

emit({"event": "python", "version": "%d.%d.%d" % tuple(sys.version_info[:3]),
      "executable": sys.executable, "prefix": sys.prefix,
      "implementation": sys.implementation.name,
      "virtualenv": sys.prefix != getattr(sys, "base_prefix", sys.prefix),
      "conda": os.path.isdir(os.path.join(sys.prefix, "conda-meta")),
      "metadata": metadata is not None})


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


installed = {}
if metadata is not None:
    for d in metadata.distributions():
        try:
            name = d.metadata["Name"]
        except Exception:
            name = None
        if name:
            installed.setdefault(norm(name), (name, d.version))

# The CUDA major a distribution was built for, from its name or version:
# cudf-cu13, cupy-cuda12x, jax-cuda13-plugin, nvidia-cuda-runtime-cu12,
# torch 2.11.0+cu130, warp-lang 1.9.0+cu12.
NAME_MAJOR = re.compile(r"-cu(?:da)?(\d{2})(?:x|-|$)")
LOCAL_MAJOR = re.compile(r"\+cu(\d{2})(\d?)\b")


def cuda_of(name, version):
    m = NAME_MAJOR.search(norm(name))
    if m:
        return int(m.group(1)), "the distribution's name (%s)" % name
    m = LOCAL_MAJOR.search(version or "")
    if m:
        return int(m.group(1)), "its version (%s %s)" % (name, version)
    return None, None


cuda_dists = []
for key, (name, version) in sorted(installed.items()):
    major, _ = cuda_of(name, version)
    if major is None and key.startswith("nvidia-cuda-runtime") and version:
        # CUDA 13 runtime wheels dropped the -cu13 suffix: the version says
        try:
            major = int(version.split(".")[0])
        except ValueError:
            major = None
    if major is not None:
        cuda_dists.append({"name": name, "version": version, "cuda_major": major})
emit({"event": "dists", "count": len(installed), "cuda": cuda_dists})

CUDART = re.compile(r"/(libcudart(?:-[0-9a-f]+)?\.so\.(\d+)[.\d]*)$")


def cudart_loaded():
    found = {}
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                m = CUDART.search(line.strip())
                if m:
                    found[line.split(None, 5)[-1].strip()] = int(m.group(2))
    except OSError:
        pass
    return found


def version_text(v):
    """CUDA's integer versions (13020) as "13.2"."""
    if isinstance(v, int):
        return "%d.%d" % (v // 1000, (v % 1000) // 10)
    if isinstance(v, (tuple, list)) and len(v) >= 2:
        return "%s.%s" % (v[0], v[1])
    return str(v) if v is not None else None


# Device checks: each returns what the package itself says about CUDA and
# whether it reaches a device (a one-element allocation).
def check_cupy(mod, out):
    rt = mod.cuda.runtime
    out["runtime_version"] = version_text(rt.runtimeGetVersion())
    out["device_count"] = rt.getDeviceCount()
    a = mod.zeros(1, dtype=mod.float32)
    a += 1
    out["device_ok"] = float(a[0]) == 1.0


def check_torch(mod, out):
    out["runtime_version"] = mod.version.cuda
    if not mod.version.cuda:
        out["device_error"] = "a CPU-only build (torch.version.cuda is None)"
        out["device_ok"] = False
        return
    out["device_count"] = mod.cuda.device_count()
    if not mod.cuda.is_available():
        try:
            mod.cuda.init()
            out["device_error"] = "torch.cuda.is_available() is False"
        except Exception as e:
            out["device_error"] = error_text(e)
        out["device_ok"] = False
        return
    a = mod.ones(1, device="cuda")
    out["device_ok"] = float(a.sum()) == 1.0


def check_rmm(mod, out):
    from cuda.bindings import runtime as rt
    err, v = rt.cudaRuntimeGetVersion()
    if int(err) == 0:
        out["runtime_version"] = version_text(v)
    err, n = rt.cudaGetDeviceCount()
    if int(err) != 0:
        raise RuntimeError("cudaGetDeviceCount: %s" % getattr(err, "name", err))
    out["device_count"] = n
    import rmm
    rmm.DeviceBuffer(size=1)
    out["device_ok"] = True


def check_numba(mod, out):
    from numba import cuda
    try:
        out["runtime_version"] = version_text(cuda.runtime.get_version())
    except Exception:
        pass
    if not cuda.is_available():
        try:
            cuda.current_context()
            out["device_error"] = "numba.cuda.is_available() is False"
        except Exception as e:
            out["device_error"] = error_text(e)
        out["device_ok"] = False
        return
    out["device_count"] = len(cuda.gpus)
    a = cuda.device_array(1)
    out["device_ok"] = a.size == 1


def check_jax(mod, out):
    try:
        devices = mod.devices("gpu")
    except Exception as e:
        out["device_error"] = error_text(e)
        out["device_ok"] = False
        return
    out["device_count"] = len(devices)
    import jax.numpy as jnp
    a = mod.device_put(jnp.ones(1), devices[0])
    out["device_ok"] = float(a.sum()) == 1.0


def check_warp(mod, out):
    mod.config.quiet = True
    cache = tempfile.mkdtemp(prefix="gpuopt-doctor-warp-")
    atexit.register(shutil.rmtree, cache, True)
    mod.config.kernel_cache_dir = cache
    mod.init()
    out["runtime_version"] = version_text(mod.get_cuda_toolkit_version())
    out["device_count"] = mod.get_cuda_device_count()
    if not out["device_count"]:
        out["device_error"] = "Warp sees no CUDA device%s" % (
            "" if mod.get_cuda_driver_version() else " (no CUDA driver)")
        out["device_ok"] = False
        return
    a = mod.zeros(1, dtype=mod.float32, device="cuda:0")
    out["device_ok"] = a.numpy().shape == (1,)


CHECKS = {"cupy": check_cupy, "torch": check_torch, "rmm": check_rmm, "numba": check_numba,
          "jax": check_jax, "warp": check_warp}

try:
    PACKAGE_S = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
except ValueError:
    PACKAGE_S = 0.0


class Timeout(BaseException):
    pass


def on_alarm(signum, frame):
    raise Timeout("did not finish within %g s" % PACKAGE_S)


if hasattr(signal, "SIGALRM"):
    signal.signal(signal.SIGALRM, on_alarm)


def alarm(seconds):
    if hasattr(signal, "setitimer") and PACKAGE_S > 0:
        signal.setitimer(signal.ITIMER_REAL, seconds)


def timed_out(rec, step, e):
    """Notes on rec that step ("import", "device check") ran out of time."""
    if isinstance(e, Timeout):
        rec.setdefault("timed_out", step)
        rec["time_limit_s"] = PACKAGE_S


def examine(pkg, rec, step):
    """Imports the package, its submodules, and runs its device check;
    step[0] is the step under way."""
    name = pkg["name"]
    t0 = time.monotonic()
    try:
        mod = __import__(pkg.get("import", name))
        for part in pkg.get("import", name).split(".")[1:]:
            mod = getattr(mod, part)
        rec["importable"] = True
        rec["module_version"] = getattr(mod, "__version__", None)
    except BaseException as e:
        mod = None
        rec["importable"] = False
        rec["import_error"] = error_text(e)
        timed_out(rec, "import", e)
    rec["import_s"] = round(time.monotonic() - t0, 3)
    for sub in pkg.get("submodules", []):
        if "timed_out" in rec:
            break
        try:
            __import__(sub)
            rec.setdefault("submodules", {})[sub] = None
        except BaseException as e:
            rec.setdefault("submodules", {})[sub] = error_text(e)
            timed_out(rec, "import", e)
    check = CHECKS.get(pkg.get("check"))
    if mod is not None and check is not None and "timed_out" not in rec:
        step[0] = "device check"
        emit({"event": "check", "name": name})
        t1 = time.monotonic()
        try:
            check(mod, rec)
            rec.setdefault("device_ok", False)
        except BaseException as e:
            rec["device_ok"] = False
            rec["device_error"] = error_text(e)
            timed_out(rec, "device check", e)
        rec["device_check_s"] = round(time.monotonic() - t1, 3)


def find(pkg):
    """What TABLE's package pkg is installed as, from the metadata alone:
    {"name", "installed", "dist", "version", "cuda_major", "cuda_from"}."""
    name = pkg["name"]
    dist = version = None
    for d in pkg.get("dists", [name]):
        if norm(d) in installed:
            dist, version = installed[norm(d)]
            break
    rec = {"name": name, "installed": dist is not None}
    if dist is None:
        return rec
    rec["dist"] = dist
    rec["version"] = version
    major, how = cuda_of(dist, version)
    for extra in pkg.get("cuda_dists", []):  # e.g. jax's plugin, numba-cuda's bindings
        if major is None and norm(extra) in installed:
            ename, ever = installed[norm(extra)]
            major, how = cuda_of(ename, ever)
            if major is None and pkg.get("cuda_from_version") and ever:
                try:
                    major, how = int(ever.split(".")[0]), "%s %s" % (ename, ever)
                except ValueError:
                    pass
    rec["cuda_major"] = major
    rec["cuda_from"] = how
    return rec


# Every package's installation first, from the metadata alone: what the
# imports below do not reach in time is still known to be there.
found = [find(pkg) for pkg in table]
emit({"event": "plan", "packages": found})

seen_libs = cudart_loaded()
for pkg, plan in zip(table, found):
    name = pkg["name"]
    if name in skip:
        continue
    rec = dict(plan, event="package")
    if not plan["installed"]:
        emit(rec)
        continue
    emit({"event": "begin", "name": name})
    step = ["import"]
    try:
        alarm(PACKAGE_S)
        examine(pkg, rec, step)
    except Timeout as e:  # between the steps that catch it themselves
        if step[0] == "import":
            rec.setdefault("import_error", error_text(e))
            rec.setdefault("importable", False)
        else:
            rec.setdefault("device_ok", False)
            rec.setdefault("device_error", error_text(e))
        timed_out(rec, step[0], e)
    finally:
        alarm(0)
    now = cudart_loaded()
    rec["cudart_loaded"] = sorted(p for p in now if p not in seen_libs)
    seen_libs = now
    emit(rec)

libs = cudart_loaded()
emit({"event": "libs", "cudart": [{"path": p, "major": m} for p, m in sorted(libs.items())]})
emit({"event": "done"})
