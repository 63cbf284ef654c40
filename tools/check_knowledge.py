#!/usr/bin/env python3
"""Check gpuopt's knowledge (data/knowledge/*.json) against the real packages.

The GPU packages (cuML, cuDF, nx-cugraph, cuCIM, CuPy) and the CPU libraries they stand in for
(NumPy, SciPy, pandas, scikit-learn, scikit-image, NetworkX) are installed from PyPI into .venv
by scripts/setup.sh (requirements/gpu-packages.txt and knowledge-check.txt, hash-pinned). The GPU packages are read as
source (their .py / .pyi / .pyx files, never imported: they need a GPU and CUDA libraries);
NumPy, SciPy, pandas and NetworkX are imported to list their public names, scikit-learn and
scikit-image are read as source too (their __all__ lists).

What is compared:
  - cuml.accel: the estimators cuML proxies (cuml/accel/_overrides) against sklearn.json's port
    entries, both ways, and each estimator's CPU fallbacks on a constructor parameter
    (UnsupportedOnGPU raised in _params_from_cpu) against the entry's "fallback" arguments;
  - nx-cugraph: the algorithms it implements (_nx_cugraph's "functions") against networkx.json;
  - cuCIM: cucim.skimage's modules against scikit-image's, name by name, and skimage.json;
  - CuPy: every public NumPy function, and every function of the SciPy modules cupyx.scipy
    covers, against numpy.json / scipy.json: a port must name a CuPy function that exists, a
    "no GPU path" must name one that does not;
  - cuDF: pandas' top-level functions against the cudf namespace (what cudf.pandas runs on the
    GPU) and pandas.json;
  - every GPU name the knowledge writes in a finding (gpu_name, or made by gpu_prefix) exists.

Every fact is counted (class Facts): checked by executing package code (in a subprocess with a
time limit: cuml.accel's proxies and each GPU class's _params_from_cpu run on scikit-learn
estimators; nx-cugraph's get_info and BackendInterface.can_run; names resolved by import), by
reading source, or marked "check": "uncheckable: REASON" in the data; a fact none of these
reaches is "skipped" and fails the run.

Prints the versions it read, then every disagreement, one a line: "FILE: NAME: what the package
says; what the knowledge says". Disagreements listed in tools/check_knowledge_accepted.tsv (with
the reason they stand) are printed as accepted. Exit status: 0 none left, 1 disagreements,
2 packages missing or unreadable.

Usage: .venv/bin/python tools/check_knowledge.py [--site DIR] [--data DIR] [--verbose]
"""

import argparse
import ast
import fnmatch
import glob
import importlib
import inspect
import json
import os
import re
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Each GPU package by the distributions it ships as (the CUDA 13 build first; the Python sources
# of the CUDA 12 one are the same).
GPU_DISTS = {"cuml": ["cuml-cu13", "cuml-cu12"], "cudf": ["cudf-cu13", "cudf-cu12"],
             "nx-cugraph": ["nx-cugraph-cu13", "nx-cugraph-cu12"],
             "cucim": ["cucim-cu13", "cucim-cu12"], "cupy": ["cupy-cuda13x", "cupy-cuda12x"]}
CPU_DISTS = ["numpy", "scipy", "pandas", "scikit-learn", "scikit-image", "networkx"]


# ---------------------------------------------------------------- the knowledge, as the scanner reads it

class Library:
    """One knowledge file: its entries and the lookup rules of data/README.md."""

    def __init__(self, path):
        with open(path) as f:
            self.doc = json.load(f)
        self.file = os.path.basename(path)
        self.apis = self.doc.get("apis", [])
        self.exact = {}
        self.globs = []
        for e in self.apis:
            if any(c in e["name"] for c in "*?["):
                self.globs.append(e)
            else:
                self.exact.setdefault(e["name"], e)
        self.globs.sort(key=lambda e: -len(e["name"]))
        self.unlisted = self.doc.get("unlisted", {})

    def lookup(self, name):
        """The entry the scanner uses for NAME, or None."""
        if name in self.exact:
            return self.exact[name]
        for e in self.globs:
            if fnmatch.fnmatchcase(name, e["name"]):
                return e
        return None

    def verdict(self, name):
        """'port', 'nogpu', 'ignore' or 'none' (no entry: GPU900 where the library has verdicts)."""
        e = self.lookup(name)
        if e is None:
            short = name.rsplit(".", 1)[-1]
            how = self.unlisted.get("classes" if short[:1].isupper() else "functions", "ignore")
            return {"port": "port", "no-gpu": "nogpu"}.get(how, "none"), None
        if e.get("ignore"):
            return "ignore", e
        if e.get("gpu") is False:
            return "nogpu", e
        return "port", e

    def gpu_name(self, name, e):
        if e is not None and e.get("gpu_name"):
            return e["gpu_name"]
        for cpu, gpu in self.doc.get("gpu_prefix", []):
            if name.startswith(cpu):
                return gpu + name[len(cpu):]
        return None


def load_knowledge(data_dir):
    libs = {}
    for path in sorted(glob.glob(os.path.join(data_dir, "knowledge", "*.json"))):
        lib = Library(path)
        libs[lib.file[:-5]] = lib
    return libs


# ---------------------------------------------------------------- packages read as source

class Source:
    """Public names of modules of packages installed under SITE, read from their files."""

    def __init__(self, site):
        self.site = site
        self.cache = {}

    def module_file(self, dotted):
        base = os.path.join(self.site, *dotted.split("."))
        # __init__.py is what runs (it may read its .pyi through lazy_loader's attach_stub)
        for cand in (os.path.join(base, "__init__.py"), os.path.join(base, "__init__.pyi"),
                     base + ".pyi", base + ".py", base + ".pyx"):
            if os.path.isfile(cand):
                return cand
        if glob.glob(base + ".*.so") or glob.glob(base + ".so"):
            return "compiled"
        return None

    def is_package(self, dotted):
        f = self.module_file(dotted)
        return f not in (None, "compiled") and os.path.basename(f).startswith("__init__.")

    def names(self, dotted, depth=0):
        """(set of public names, complete) of module DOTTED, or (None, False) if it is not there."""
        if dotted in self.cache:
            return self.cache[dotted]
        self.cache[dotted] = (set(), False)  # a cycle reads as incomplete
        path = self.module_file(dotted)
        if path is None:
            result = (None, False)
        elif path == "compiled":
            result = (set(), False)
        elif path.endswith(".pyx"):
            result = (self._pyx_names(path), True)
        else:
            result = self._py_names(dotted, path, depth)
        self.cache[dotted] = result
        return result

    def _pyx_names(self, path):
        with open(path, errors="replace") as f:
            text = f.read()
        return set(re.findall(r"^(?:cp?def\s+(?:[\w.\[\]]+\s+)*?|class\s+|def\s+)(\w+)\s*[(:]",
                              text, re.M))

    def _py_names(self, dotted, path, depth):
        with open(path, errors="replace") as f:
            try:
                tree = ast.parse(f.read())
            except SyntaxError:
                return set(), False
        pkg = dotted if os.path.basename(path).startswith("__init__.") else dotted.rsplit(".", 1)[0]
        names, complete, dunder_all = set(), True, None

        def absolute(node):
            if node.level == 0:
                return node.module
            parts = pkg.split(".")
            if node.level > 1:
                parts = parts[: -(node.level - 1)]
            return ".".join(parts + ([node.module] if node.module else []))

        def walk(body):
            nonlocal complete, dunder_all
            for n in body:
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    if n.name == "__getattr__":
                        complete = False
                    names.add(n.name)
                elif isinstance(n, ast.Import):
                    for a in n.names:
                        names.add(a.asname or a.name.split(".")[0])
                elif isinstance(n, ast.ImportFrom):
                    mod = absolute(n)
                    for a in n.names:
                        if a.name == "*":
                            sub, ok = self.names(mod, depth + 1) if depth < 20 else (None, False)
                            if sub is None:
                                complete = False
                            else:
                                names.update(x for x in sub if not x.startswith("_"))
                                complete = complete and ok
                        else:
                            names.add(a.asname or a.name)
                elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                    for t in targets:
                        for el in (t.elts if isinstance(t, ast.Tuple) else [t]):
                            if isinstance(el, ast.Name):
                                names.add(el.id)
                                if el.id == "__all__":
                                    lit = literal_strings(n.value)
                                    if lit is None:
                                        if "attach_stub" in ast.dump(n.value):
                                            stub = os.path.splitext(path)[0] + ".pyi"
                                            if os.path.isfile(stub) and stub != path:
                                                sub, _ = self._py_names(dotted, stub, depth)
                                                dunder_all = (dunder_all or set()) | sub
                                                continue
                                        complete = False
                                    elif isinstance(n, ast.AugAssign):
                                        dunder_all = (dunder_all or set()) | lit
                                    else:
                                        dunder_all = lit
                                elif isinstance(n.value, ast.Call) and "attach_stub" in ast.dump(n.value):
                                    stub = os.path.splitext(path)[0] + ".pyi"
                                    if os.path.isfile(stub) and stub != path:
                                        sub, _ = self._py_names(dotted, stub, depth)
                                        names.update(sub)
                elif isinstance(n, ast.If):
                    walk(n.body)
                    walk(n.orelse)
                elif isinstance(n, ast.Try):
                    walk(n.body)
                    for h in n.handlers:
                        walk(h.body)
                    walk(n.orelse)
                    walk(n.finalbody)

        walk(tree.body)
        if dunder_all is not None:
            names = dunder_all | {x for x in names if x.startswith("_")}
        # subpackages and submodules are attributes once imported
        if os.path.basename(path).startswith("__init__."):
            d = os.path.dirname(path)
            for entry in os.listdir(d):
                full = os.path.join(d, entry)
                if entry.startswith("_") or entry == "tests":
                    continue
                if os.path.isdir(full) and glob.glob(os.path.join(full, "__init__.py*")):
                    names.add(entry)
        return {x for x in names if not x.startswith("_")}, complete

    def exists(self, dotted):
        """True / False, or None when it cannot be told (a compiled or lazy module)."""
        parts = dotted.split(".")
        # the longest prefix that is a module
        for i in range(len(parts), 0, -1):
            mod = ".".join(parts[:i])
            if self.module_file(mod) is not None:
                break
        else:
            return False
        rest = parts[i:]
        if not rest:
            return True
        names, complete = self.names(mod)
        if names is None:
            return False
        if rest[0] in names:
            if len(rest) == 1:
                return True
            members = self.class_members(mod, rest[0])
            if members is None:
                return None
            return rest[1] in members if len(rest) == 2 else None
        return False if complete else None

    def class_members(self, mod, cls, seen=None):
        """Method and attribute names of class CLS as defined in package MOD's source (bases
        followed by name within the same top-level package), or None."""
        seen = seen or set()
        if (mod, cls) in seen:
            return set()
        seen.add((mod, cls))
        top = mod.split(".")[0]
        node = self.find_class(top, cls)
        if node is None:
            return None
        members = set()
        for n in node.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                members.add(n.name)
            elif isinstance(n, ast.Assign):
                members.update(t.id for t in n.targets if isinstance(t, ast.Name))
            elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
                members.add(n.target.id)
        for b in node.bases:
            bname = b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", None)
            if bname and bname not in ("object", "Generic"):
                sub = self.class_members(mod, bname, seen)
                if sub:
                    members |= sub
        return members

    def find_class(self, top, cls):
        key = ("class", top, cls)
        if key not in self.cache:
            found = None
            pat = re.compile(r"^class\s+%s\b" % re.escape(cls), re.M)
            for path in sorted(glob.glob(os.path.join(self.site, top, "**", "*.py"), recursive=True)):
                if "/tests/" in path:
                    continue
                with open(path, errors="replace") as f:
                    text = f.read()
                if not pat.search(text):
                    continue
                try:
                    tree = ast.parse(text)
                except SyntaxError:
                    continue
                for n in tree.body:
                    if isinstance(n, ast.ClassDef) and n.name == cls:
                        found = n
                        break
                if found:
                    break
            self.cache[key] = found
        return self.cache[key]


def literal_strings(node):
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            return {e.value for e in node.elts}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = literal_strings(node.left), literal_strings(node.right)
        if a is not None and b is not None:
            return a | b
    return None


def dist_versions(site):
    out = {}
    for d in glob.glob(os.path.join(site, "*.dist-info")):
        meta = os.path.join(d, "METADATA")
        if not os.path.isfile(meta):
            continue
        name = ver = None
        with open(meta, errors="replace") as f:
            for line in f:
                if line.startswith("Name:"):
                    name = line.split(":", 1)[1].strip()
                elif line.startswith("Version:"):
                    ver = line.split(":", 1)[1].strip()
                if name and ver:
                    break
        if name:
            out[re.sub(r"[-_.]+", "-", name).lower()] = ver
    return out


# ---------------------------------------------------------------- every fact, and how it was checked

EXEC, SOURCE = "executing package code", "reading source"


class Facts:
    """Every fact of the knowledge: each entry of `apis` (its verdict: a GPU path, none, a CPU
    helper; the name exists), each fallback condition of an entry, each entry of `imports`. A
    check that compares a fact with a package says so (`done`); a fact no check reached must
    carry "check": "uncheckable: REASON" (on itself, its entry or its file), else it counts as
    skipped and the run fails."""

    def __init__(self, libs):
        self.facts = {}  # (file, name, index or None) -> {"how": set, "mark": str or None}
        for lib in libs.values():
            fmark = lib.doc.get("check")
            for e in lib.apis:
                emark = e.get("check", fmark)
                self.facts[(lib.file, e["name"], None)] = {"how": set(), "mark": emark}
                for i, f in enumerate(e.get("fallback", [])):
                    self.facts[(lib.file, e["name"], i)] = {"how": set(), "mark": f.get("check", emark)}
            for imp in lib.doc.get("imports", []):
                self.facts[(lib.file, "import " + imp["module"], None)] = {
                    "how": set(), "mark": imp.get("check", fmark)}

    def done(self, file, name, how, index=None):
        f = self.facts.get((file, name, index))
        if f is not None:
            f["how"].add(how)

    def entry(self, lib, e, how):
        if e is not None:
            self.done(lib.file, e["name"], how)

    def summary(self):
        """(counts, uncheckable reasons {reason: n}, skipped [keys])"""
        n = {EXEC: 0, SOURCE: 0, "uncheckable": 0}
        reasons, skipped = {}, []
        for key, f in self.facts.items():
            if EXEC in f["how"]:
                n[EXEC] += 1
            elif SOURCE in f["how"]:
                n[SOURCE] += 1
            elif f["mark"]:
                n["uncheckable"] += 1
                r = f["mark"].split(":", 1)[1].strip()
                reasons[r] = reasons.get(r, 0) + 1
            else:
                skipped.append(key)
        return n, reasons, skipped


def fact_name(key):
    file, name, index = key
    return f"{file}: {name}" + (f": fallback #{index}" if index is not None else "")


# ---------------------------------------------------------------- package code run in a subprocess

WORKER_TIMEOUT = 300


def run_worker(site, task, payload, rep):
    """Run worker TASK (below) on PAYLOAD in a fresh interpreter that imports the GPU packages
    (they import without a GPU; nothing here launches GPU work); its JSON answer, or None."""
    import subprocess
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=site + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", task],
                           input=json.dumps(payload), capture_output=True, text=True,
                           timeout=WORKER_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        rep.cannot(f"worker {task}: no answer within {WORKER_TIMEOUT} s")
        return None
    if r.returncode != 0:
        rep.cannot(f"worker {task}: exit {r.returncode}: {r.stderr.strip()[-600:]}")
        return None
    return json.loads(r.stdout)


def decode_value(v):
    if isinstance(v, dict) and "callable" in v:
        return lambda *a, **k: 1.0
    if isinstance(v, dict) and "dict" in v:
        return {0: 1.0}
    if isinstance(v, dict) and "list" in v:
        return [0]
    return v


def encode_value(v):
    if callable(v) and not isinstance(v, type):
        return {"callable": True}
    if isinstance(v, dict):
        return {"dict": True}
    if isinstance(v, (list, tuple)):
        return {"list": True}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return None


def sklearn_candidates(cls, arg, extra):
    """Values to try for constructor parameter ARG of scikit-learn class CLS: its declared
    constraints' options (StrOptions, booleans, None, interval points, a callable) and the
    values the knowledge names."""
    import numbers
    out = []

    def add(v):
        if v is not None and not isinstance(v, (bool, int, float, str, dict)) and not callable(v):
            return
        if not any(type(v) is type(w) and v == w for w in out if not callable(w)) or callable(v):
            out.append(v)
    for v in extra:
        add(decode_value(v))
    for c in getattr(cls, "_parameter_constraints", {}).get(arg, []):
        kind = type(c).__name__
        if c is None:
            add(None)
        elif c == "boolean":
            add(True), add(False)
        elif c == "callable":
            add(decode_value({"callable": True}))
        elif kind in ("StrOptions", "Options"):
            for o in sorted(c.options, key=repr):
                add(o)
        elif kind == "Interval":
            lo = c.left if c.left is not None else -1
            hi = c.right if c.right is not None else lo + 10
            pts = [lo, hi, (lo + hi) / 2]
            if c.type is numbers.Integral or c.type == "integral" or getattr(c.type, "__name__", "") == "Integral":
                pts = [int(lo), int(hi), int((lo + hi) // 2) or 1]
            for p in pts:
                if c.is_satisfied_by(p):
                    add(p)
        elif c == dict or c == "dict" or (isinstance(c, type) and issubclass(c, dict)):
            add({0: 1.0})
    return out


def worker_cuml(payload):
    """For each CPU estimator: is it proxied by cuml.accel (the override modules' __all__), its
    GPU class, and for each parameter asked about: which candidate values make the GPU class's
    own translation (_params_from_cpu, as cuml.accel calls it) raise UnsupportedOnGPU."""
    import pkgutil
    import cuml.accel._overrides as ov
    from cuml.internals.interop import UnsupportedOnGPU
    proxies, failed = {}, {}
    for m in pkgutil.walk_packages(ov.__path__, ov.__name__ + "."):
        if m.ispkg:
            continue
        cpu_mod = m.name[len(ov.__name__) + 1:]
        try:
            mod = importlib.import_module(m.name)
        except Exception as ex:  # the CPU library of an override is missing (umap, hdbscan)
            failed[cpu_mod] = f"{type(ex).__name__}: {ex}"
            continue
        for cls in getattr(mod, "__all__", ()):
            proxies[f"{cpu_mod}.{cls}"] = getattr(mod, cls)
    out = {"proxied": sorted(proxies), "failed": failed, "estimators": {}}
    for name, args in payload.items():
        proxy = proxies.get(name)
        if proxy is None:
            continue
        gpu = proxy._gpu_class
        cpu_mod, _, cls_name = name.rpartition(".")
        try:
            cpu = getattr(importlib.import_module(cpu_mod), cls_name)
        except Exception as ex:
            out["estimators"][name] = {"error": f"{type(ex).__name__}: {ex}"}
            continue
        sig = inspect.signature(cpu.__init__).parameters
        res = {"gpu_class": f"{gpu.__module__}.{gpu.__qualname__}", "args": {}, "methods": {}}
        base = {}
        for arg, spec in args.get("params", {}).items():
            if spec.get("safe") is not None:
                base[arg] = decode_value(spec["safe"])
        # the values tried differ from a base that stays on the GPU: the defaults, with a
        # seed where a default random_state=None itself falls back (TargetEncoder)
        for fix in ({}, {"random_state": 0}):
            if any(k not in sig for k in fix):
                continue
            try:
                gpu._params_from_cpu(cpu(**base, **fix))
                base.update(fix)
                break
            except UnsupportedOnGPU as ex:
                res["base"] = str(ex)
            except Exception as ex:
                res["base"] = f"{type(ex).__name__}: {ex}"
        else:
            out["estimators"][name] = {"error": f"its defaults fall back ({res['base']})"}
            continue
        res.pop("base", None)
        for arg, spec in args.get("params", {}).items():
            if arg not in sig:
                res["args"][arg] = {"missing": True}
                continue
            default = sig[arg].default
            tried = []
            for v in sklearn_candidates(cpu, arg, spec.get("values", [])):
                kw = dict(base)
                kw[arg] = v
                try:
                    model = cpu(**kw)
                    gpu._params_from_cpu(model)
                    verdict = "gpu"
                except UnsupportedOnGPU as ex:
                    verdict = "cpu: " + str(ex)
                except Exception as ex:
                    verdict = f"error: {type(ex).__name__}: {ex}"
                is_default = (not callable(v) and type(v) is type(default) and v == default) or \
                    (v is None and default is None)
                tried.append([encode_value(v), repr(v) if not callable(v) else "a callable",
                              is_default, verdict])
            res["args"][arg] = {"tried": tried, "default": encode_value(default)}
        for meth in args.get("methods", []):
            # as ProxyBase._call_gpu_method picks it: the proxy's _gpu_METHOD, else the GPU class's
            fn = getattr(proxy, f"_gpu_{meth}", None) or getattr(gpu, meth, None)
            if fn is None:
                res["methods"][meth] = None
                continue
            try:
                src = textwrap.dedent(inspect.getsource(fn))
            except (OSError, TypeError):
                src = None
            res["methods"][meth] = {"params": list(inspect.signature(fn).parameters), "source": src}
        out["estimators"][name] = res
    return out


def worker_nx(payload):
    """nx-cugraph's own tables and decisions: the functions it implements (_nx_cugraph's
    get_info, as NetworkX reads it at dispatch) and, for each fallback asked about, whether its
    BackendInterface.can_run accepts each candidate value."""
    import networkx
    import _nx_cugraph
    from networkx.utils.backends import _registered_algorithms as registered
    from nx_cugraph.interface import BackendInterface
    info = _nx_cugraph.get_info()
    out = {"functions": sorted(info.get("functions", {})), "runs": {}}
    G = networkx.path_graph(3)
    for key, spec in payload.items():
        algo, arg = spec["algo"], spec["arg"]
        if algo not in registered:
            continue
        sig = inspect.signature(registered[algo].orig_func).parameters
        if arg not in sig:
            out["runs"][key] = {"missing": True}
            continue
        args, kw = [], {}
        for i, (p, prm) in enumerate(sig.items()):
            if i == 0:
                args.append(G)
            elif prm.default is inspect.Parameter.empty and prm.kind in (
                    prm.POSITIONAL_ONLY, prm.POSITIONAL_OR_KEYWORD):
                args.append(0)
        default = sig[arg].default
        tried = []
        for v in spec["values"]:
            val = decode_value(v)
            kw = {arg: val}
            try:
                ok = BackendInterface.can_run(algo, tuple(args), kw)
                verdict = "gpu" if ok is True else f"cpu: {ok}" if isinstance(ok, str) else "cpu"
            except Exception as ex:
                verdict = f"error: {type(ex).__name__}: {ex}"
            is_default = not callable(val) and type(val) is type(default) and val == default
            tried.append([v, repr(val) if not callable(val) else "a callable", is_default, verdict])
        out["runs"][key] = {"tried": tried}
    return out


def worker_resolve(payload):
    """Which of these dotted names exist in the imported packages (CuPy, cupyx, cuDF), and for
    functions asked about, their parameters and source."""
    out = {}
    for name in payload["names"]:
        out[name] = resolve(name) is not None
    funcs = {}
    for name in payload.get("functions", []):
        fn = resolve(name)
        if fn is None or not callable(fn):
            funcs[name] = None
            continue
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            params = None
        try:
            src = textwrap.dedent(inspect.getsource(fn))
        except (OSError, TypeError):
            src = None
        funcs[name] = {"params": params, "source": src}
    return {"exists": out, "functions": funcs}


WORKERS = {"cuml": worker_cuml, "nx": worker_nx, "resolve": worker_resolve}


def worker_main(task):
    import warnings
    warnings.simplefilter("ignore")
    payload = json.load(sys.stdin)
    out = WORKERS[task](payload)
    sys.stdout.write(json.dumps(out))
    return 0


# ---------------------------------------------------------------- a fallback condition, as the scanner reads it

def same_value(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def cond_holds(c, v, is_callable):
    """Whether fallback condition C holds for a literal V passed for its argument."""
    if "present" in c:
        return True
    if "callable" in c:
        return is_callable
    if is_callable:
        return "not_in" in c  # a callable is no listed literal
    if "equals" in c:
        return any(same_value(v, w) for w in c["equals"])
    if "not_in" in c:
        return not any(same_value(v, w) for w in c["not_in"])
    if "prefix" in c:
        return isinstance(v, str) and any(v.startswith(p) for p in c["prefix"])
    if "is" in c:
        t = {bool: "bool", int: "int", float: "float", str: "str", type(None): "null"}.get(type(v))
        return t in c["is"]
    return False


def predicted(conds, v, is_callable, is_default):
    """The indices of the conditions on one argument that say the value V falls back."""
    if is_default:
        return [i for i, c in conds if "default" in c and cond_holds(c, c["default"], False)]
    return [i for i, c in conds if cond_holds(c, v, is_callable)]


def compare_tried(tried, conds, report):
    """Compare the package's verdict on each tried value with the conditions on one argument;
    REPORT(index or None, said) for each disagreement. Returns the indices of the conditions
    that a tried value exercised (one the condition says falls back, or a value a not_in list
    keeps on the GPU)."""
    compared = set()
    for enc, text, is_default, verdict in tried:
        if verdict.startswith("error"):
            continue
        is_callable = isinstance(enc, dict) and "callable" in enc
        v = decode_value(enc)
        pred = predicted(conds, v, is_callable, is_default)
        for i, c in conds:
            if i in pred or (not is_default and cond_holds(c, v, is_callable)) or \
                    ("not_in" in c and not is_callable and any(same_value(v, w) for w in c["not_in"])):
                compared.add(i)
        falls = verdict.startswith("cpu")
        if falls and not pred:
            what = "the default " if is_default else ""
            report(None, f"falls back on {what}{text} ({verdict[5:] or 'no reason given'})")
        elif not falls and pred:
            for i in pred:
                report(i, f"runs {text} on the GPU")
    return compared


def raising_tests(src, arg):
    """Whether source SRC (one function) raises in a branch whose test reads ARG."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None
    names = {arg}  # and the names assigned from expressions that read it
    for _ in range(3):
        for n in ast.walk(tree):
            if isinstance(n, (ast.Assign, ast.NamedExpr)) and \
                    any(isinstance(x, ast.Name) and x.id in names for x in ast.walk(n.value)):
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                    names.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))
    for n in ast.walk(tree):
        if isinstance(n, ast.If):
            reads = any(isinstance(x, ast.Name) and x.id in names for x in ast.walk(n.test))
            if reads and any(isinstance(x, ast.Raise) for s in n.body + n.orelse for x in ast.walk(s)):
                return True
    # handed on to another function (pdist calls cdist): not decided here
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and any(isinstance(x, ast.Name) and x.id == arg
                                           for a in n.args + [k.value for k in n.keywords]
                                           for x in ast.walk(a)):
            return None
    return False


# ---------------------------------------------------------------- the checks

class Report:
    def __init__(self, accepted):
        self.items = []
        self.accepted = accepted
        self.used = set()
        self.unreadable = []
        self.counts = {}
        self.notes = []
        self.facts = None

    def note(self, what):
        self.notes.append(what)

    def count(self, what):
        self.counts[what] = self.counts.get(what, 0) + 1

    def add(self, file, name, text):
        self.items.append((file, name, text))

    def cannot(self, what):
        self.unreadable.append(what)


def runtime_public(modname):
    """Public callables of an importable (CPU) module: {name: object}."""
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None) or dir(mod)
    out = {}
    for n in names:
        if n.startswith("_"):
            continue
        obj = getattr(mod, n, None)
        if obj is None or inspect.ismodule(obj) or not callable(obj):
            continue
        out[n] = obj
    return out


def check_cuml(src, libs, rep, versions):
    sk = libs["sklearn"]
    base = os.path.join(src.site, "cuml", "accel", "_overrides")
    accelerated = {}  # CPU name -> (override file, class node)
    for path in sorted(glob.glob(os.path.join(base, "**", "*.py"), recursive=True)):
        rel = os.path.relpath(path, base)
        if rel.endswith("__init__.py"):
            continue
        mod = rel[:-3].replace(os.sep, ".")  # sklearn.cluster, umap, hdbscan
        tree = ast.parse(open(path).read())
        exported = None
        classes = {}
        imported = {}
        for n in tree.body:
            if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
                for a in n.names:
                    imported[a.asname or a.name] = f"{n.module}.{a.name}"
            if isinstance(n, ast.Import):
                for a in n.names:
                    imported[a.asname or a.name] = a.name
            if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets):
                exported = literal_strings(n.value)
            if isinstance(n, ast.ClassDef):
                classes[n.name] = n
        if exported is None:
            rep.cannot(f"{rel}: no literal __all__")
            continue
        for cls in exported:
            accelerated[f"{mod}.{cls}"] = (rel, classes.get(cls), imported, classes)
    if not accelerated:
        rep.cannot("cuml.accel: no proxied estimators found")
        return
    ver = versions.get("cuml", "?")
    run_proxied, failed = check_cuml_exec(src, libs, rep, versions)

    def how_of(name):
        return EXEC if name in run_proxied or (run_proxied and name.split(".")[0] not in failed
                                                and not any(name.startswith(m + ".") for m in failed)) \
            else SOURCE
    for name in sorted(run_proxied - set(accelerated)):
        rep.add(sk.file, name, f"cuML {ver}'s cuml.accel proxies it when run; its source "
                               f"(cuml/accel/_overrides) was not read so: the checker is wrong")
    for name, (rel, _node, _imp, _cl) in sorted(accelerated.items()):
        rep.count("estimators cuml.accel proxies")
        v, e = sk.verdict(name)
        rep.facts.entry(sk, e, how_of(name))
        if v != "port" or (e is not None and e.get("target", "cuml.accel") != "cuml.accel"):
            rep.add(sk.file, name, f"cuML {ver} accelerates it under cuml.accel ({rel}); "
                                   f"the knowledge says {describe(v, e)}")
    # the other way: every accelerated class the knowledge names
    for e in sk.apis:
        n = e["name"]
        if "*" in n or e.get("ignore") or e.get("gpu") is False or e.get("meta"):
            continue
        if e.get("target", "cuml.accel") != "cuml.accel":
            continue
        parts = n.split(".")
        if not parts[-1][:1].isupper() or parts[-2][:1].isupper():
            continue  # functions and methods of a class are checked with their class
        if n not in accelerated and f"{parts[0]}.{parts[-1]}" not in accelerated:
            rep.add(sk.file, n, f"cuML {ver} does not proxy it (cuml/accel/_overrides); "
                                f"the knowledge says cuml.accel runs it on the GPU")
        rep.facts.entry(sk, e, how_of(n))
    # the classes the knowledge says cuml.accel does not run (no GPU path, CPU helpers), and
    # the globs over them: cuml.accel proxies none of them
    for e in sk.apis:
        n = e["name"]
        if not (e.get("ignore") or e.get("gpu") is False):
            continue
        hits = [a for a in accelerated if sk.lookup(a) is e]
        if not hits:
            rep.facts.entry(sk, e, how_of(n) if "*" not in n else (EXEC if run_proxied else SOURCE))
    # methods of a class: a GPU path when their class has one (or the entry says otherwise)
    for e in sk.apis:
        parts = e["name"].split(".")
        if "*" in e["name"] or len(parts) < 3 or not parts[-2][:1].isupper():
            continue
        cls = ".".join(parts[:-1])
        ce = sk.lookup(cls)
        cls_port = cls in accelerated or f"{parts[0]}.{parts[-2]}" in accelerated
        v, _ = sk.verdict(e["name"])
        if v == "port" and not cls_port and not e.get("meta") and \
                e.get("target", sk.doc.get("target")) == "cuml.accel":
            rep.add(sk.file, e["name"], f"cuML {ver} does not proxy {cls}; the knowledge says "
                                        f"cuml.accel runs its {parts[-1]} on the GPU")
        rep.facts.entry(sk, e, how_of(cls))
    # fallbacks on constructor parameters
    # each proxied class under its own name, and under the module path it is defined in
    # (umap.umap_.UMAP for umap.UMAP)
    named = []
    for name, val in sorted(accelerated.items()):
        named.append((name, sk.lookup(name), val))
        top, short = name.split(".")[0], name.split(".")[-1]
        for e2 in sk.apis:
            p2 = e2["name"].split(".")
            if e2["name"] != name and p2[0] == top and p2[-1] == short and len(p2) > 2 \
                    and e2["name"] not in accelerated:
                named.append((e2["name"], e2, val))
    for name, e, (rel, node, imported, classes) in named:
        if e is None or node is None:
            continue
        src_params = {}
        gpu_cls = None
        here = module_constants(open(os.path.join(base, rel)).read())

        def merge(found):
            for prm, allowed in found.items():
                if src_params.get(prm) is None:
                    src_params[prm] = allowed

        for n in node.body:
            if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "_gpu_class" for t in n.targets):
                gpu_cls = dotted_name(n.value)
                head = (gpu_cls or "").split(".")[0]
                if head in imported:
                    gpu_cls = imported[head] + gpu_cls[len(head):]
            if isinstance(n, ast.FunctionDef) and n.name == "_params_from_cpu":
                merge(fallback_params(n, here))
        if gpu_cls in classes:  # a class of the override module itself
            meth = next((n for n in classes[gpu_cls].body if isinstance(n, ast.FunctionDef)
                         and n.name == "_params_from_cpu"), None)
            if meth is not None:
                merge(fallback_params(meth, here))
        elif gpu_cls:
            meths = find_method_source(src, gpu_cls, "_params_from_cpu")
            if not meths:
                rep.cannot(f"{name}: {gpu_cls}._params_from_cpu not found")
            for meth, consts in meths or []:
                merge(fallback_params(meth, consts))
        where = f"{gpu_cls or rel}._params_from_cpu"
        kb = {}
        for f in e.get("fallback", []):
            kb.setdefault(f["arg"], []).append(f)
        for _ in src_params:
            rep.count("parameters cuML falls back on")
        for i, f in enumerate(e.get("fallback", [])):
            if f["arg"] in src_params:
                rep.facts.done(sk.file, name, SOURCE, i)
        for p in sorted(set(src_params) - set(kb)):
            rep.add(sk.file, name, f"cuML {ver} falls back to the CPU on some values of "
                                   f"{p}= ({where}); the knowledge has no fallback on {p}")
        for p in sorted(set(kb) - set(src_params)):
            rep.add(sk.file, name, f"the knowledge falls back on {p}=; cuML {ver}'s {where} "
                                   f"does not check it")
        for p in sorted(set(kb) & set(src_params)):
            allowed = src_params[p]
            kb_allowed = [f for f in kb[p] if "not_in" in f]
            if allowed is None or not kb_allowed:
                continue
            said = {v for v in kb_allowed[0]["not_in"] if isinstance(v, str)}
            if said != allowed:
                rep.add(sk.file, name, f"cuML {ver} keeps {p}= on the GPU for "
                                       f"{sorted(allowed)} ({where}); the knowledge's not_in "
                                       f"lists {sorted(said)}")
    # every scikit-learn name the knowledge gives exists in scikit-learn (the experimental
    # estimators once enabled, as their users do)
    for flag in ("enable_iterative_imputer", "enable_halving_search_cv"):
        try:
            importlib.import_module("sklearn.experimental." + flag)
        except ImportError:
            pass
    for e in sk.apis:
        n = e["name"]
        if not n.startswith("sklearn.") or "*" in n:
            continue
        parts = n.split(".")
        if parts[-2][:1].isupper():
            parts = parts[:-1]  # a method: check its class
        if resolve(".".join(parts)) is None:
            rep.add(sk.file, n, f"scikit-learn {versions.get('scikit-learn', '?')} has no "
                                f"{'.'.join(parts)}")
        elif e.get("meta") or (e.get("target", sk.doc.get("target")) != "cuml.accel" and
                               not e.get("ignore") and e.get("gpu") is not False):
            rep.facts.entry(sk, e, EXEC)  # it exists: all a meta port or another target claims


def cuml_payload(sk):
    """The estimators and parameters to ask cuML about: each entry with fallbacks, its
    constructor parameters with the values the conditions name (and a safe base value for a
    parameter whose default falls back); method entries (Class.fit) by their method."""
    payload = {}
    for e in sk.apis:
        if not e.get("fallback") or "*" in e["name"]:
            continue
        parts = e["name"].split(".")
        if parts[-2][:1].isupper():
            cls, meth = ".".join(parts[:-1]), parts[-1]
            payload.setdefault(cls, {"params": {}, "methods": []})["methods"].append(meth)
            continue
        spec = payload.setdefault(e["name"], {"params": {}, "methods": []})
        for f in e["fallback"]:
            p = spec["params"].setdefault(f["arg"], {"values": [], "safe": None})
            vals = p["values"]
            if "callable" in f:
                vals.append({"callable": True})
            for v in f.get("equals", []) + f.get("not_in", []):
                vals.append(v)
            if "is" in f:
                vals.extend({"int": [100], "float": [0.5], "str": ["x"], "bool": [True],
                             "null": [None]}.get(t, [None])[0] for t in f["is"])
            if "default" in f and f.get("not_in"):
                p["safe"] = f["not_in"][0]
    return payload


def check_cuml_exec(src, libs, rep, versions):
    """cuml.accel's own decisions, executed: which estimators it proxies, and for each fallback
    condition, what the GPU class's _params_from_cpu does with the values it names and with the
    values scikit-learn declares for that parameter."""
    sk = libs["sklearn"]
    ver = versions.get("cuml", "?")
    ex = run_worker(src.site, "cuml", cuml_payload(sk), rep)
    if ex is None:
        return set(), {}
    proxied = set(ex["proxied"])
    for mod, why in ex["failed"].items():
        rep.note(f"cuml.accel._overrides.{mod} does not import here ({why}): its estimators are "
                 f"read as source")
    by_name = {e["name"]: e for e in sk.apis}
    for name, res in sorted(ex["estimators"].items()):
        if "error" in res:
            rep.note(f"{name}: {res['error']}: its fallbacks are read as source")
            continue
        where = f"{res['gpu_class']}._params_from_cpu"
        e = by_name.get(name)
        conds = {}
        for i, f in enumerate((e or {}).get("fallback", [])):
            conds.setdefault(f["arg"], []).append((i, f))
        for arg, out in sorted(res["args"].items()):
            if out.get("missing"):
                rep.add(sk.file, name, f"scikit-learn {versions.get('scikit-learn', '?')}'s "
                                       f"{name} has no parameter {arg}=; the knowledge falls back on it")
                for i, _ in conds.get(arg, []):
                    rep.facts.done(sk.file, name, EXEC, i)
                continue

            def report(index, said, arg=arg):
                what = f"{arg}=" if index is None else f"{arg}= (fallback #{index})"
                rep.add(sk.file, name, f"cuML {ver}'s {where}, run on {name}({arg}=...), {said}; "
                                       f"the knowledge's fallback conditions on {what} say "
                                       f"{'it does not' if index is None else 'it falls back'}")
            done = compare_tried(out["tried"], conds.get(arg, []), report)
            for i in done:
                rep.facts.done(sk.file, name, EXEC, i)
        for meth, info in sorted(res["methods"].items()):
            me = by_name.get(f"{name}.{meth}")
            if me is None:
                continue
            for i, f in enumerate(me.get("fallback", [])):
                if info is None:
                    rep.add(sk.file, me["name"], f"cuML {ver}'s {res['gpu_class']} has no {meth}; "
                                                 f"the knowledge falls back on its {f['arg']}=")
                elif f["arg"] not in info["params"]:
                    pass  # the GPU method does not take it: the proxy runs it on the CPU
                elif info["source"] and raising_tests(info["source"], f["arg"]) is False:
                    rep.add(sk.file, me["name"], f"cuML {ver}'s {res['gpu_class']}.{meth} takes "
                                                 f"{f['arg']}= and never raises on it (runs on the "
                                                 f"GPU); the knowledge says {f['arg']}= falls back")
                elif not info["source"]:
                    continue
                rep.facts.done(sk.file, me["name"], SOURCE, i)
    return proxied, ex["failed"]


def dotted_name(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def find_method_source(src, dotted_cls, method, seen=None):
    """The FunctionDefs of METHOD for class DOTTED_CLS (cuml.cluster.KMeans), read from the
    package's .py or .pyx source: the class's own (a .pyx method is cut out by indentation and
    parsed alone), and its bases' where it calls super() or has none; None if not found."""
    seen = seen if seen is not None else set()
    mod, _, cls = dotted_cls.rpartition(".")
    top = (mod or dotted_cls).split(".")[0]
    if (top, cls) in seen:
        return []
    seen.add((top, cls))
    found = find_class_text(src, mod, top, cls)
    if found is None:
        return None
    header, body, imports, consts = found
    out = []
    mm = re.search(r"^([ \t]+)def %s\(" % re.escape(method), body, re.M)
    calls_super = True
    if mm:
        indent = mm.group(1)
        lines = body[mm.start():].splitlines()
        keep = [lines[0]]
        for line in lines[1:]:
            if line.strip() and not line.startswith(indent + " ") and not line.startswith(indent + "\t") \
                    and not line.strip().startswith("#"):
                break
            keep.append(line)
        try:
            out.append((ast.parse(textwrap.dedent("\n".join(keep))).body[0], consts))
        except SyntaxError:
            return None
        calls_super = "super()." + method in "\n".join(keep)
    if calls_super:
        bases = re.search(r"\((.*)\)", header, re.S)
        for base in (bases.group(1).split(",") if bases else []):
            base = base.strip().split("[")[0]
            if not base or "=" in base:
                continue
            short = base.split(".")[-1]
            where = imports.get(short, mod) if "." not in base else base.rpartition(".")[0]
            sub = find_method_source(src, f"{where}.{short}", method, seen)
            if sub:
                out.extend(sub)
    return out


def find_class_text(src, mod, top, cls):
    """(header, body) of class CLS in the .py / .pyx files of MOD (else anywhere in TOP)."""
    pat = re.compile(r"^class\s+%s\b" % re.escape(cls), re.M)
    roots = []
    if mod:
        start = os.path.join(src.site, *mod.split("."))
        if os.path.isdir(start):
            roots.append(start)
    roots.append(os.path.join(src.site, top))
    for root in roots:
        for path in sorted(glob.glob(os.path.join(root, "**", "*.py*"), recursive=True)):
            if not path.endswith((".py", ".pyx")) or "/tests/" in path:
                continue
            text = open(path, errors="replace").read()
            m = pat.search(text)
            if not m:
                continue
            # docstrings may start lines at column 0: blank them out, keeping the line count
            text = re.sub(r'(?s)(\"\"\"|\'\'\').*?\1',
                          lambda d: d.group(1) + re.sub(r"[^\n]", " ", d.group(0)[3:-3]) + d.group(1),
                          text)
            m = pat.search(text)
            end = re.compile(r":[ \t]*(#.*)?$", re.M).search(text, m.end())
            if not end:
                continue
            header = text[m.start():end.start()]
            rest = text[end.end():]
            stop = re.search(r"^(?![ \t]|#|$)", rest, re.M)
            imports = {}
            for im in re.finditer(r"^from\s+([\w.]+)\s+c?import\s+\(?([\w\s,]+)\)?", text, re.M):
                for nm in im.group(2).replace("\n", " ").split(","):
                    nm = nm.split(" as ")[-1].strip()
                    if nm:
                        imports[nm] = im.group(1)
            return header, (rest[: stop.start()] if stop else rest), imports, module_constants(text)
    return None


def module_constants(text):
    """{NAME: set of strings} for the module-level dict / set / tuple / list literals of TEXT
    (their string keys or elements): the value lists a fallback test compares against."""
    out = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\w+)\s*(?::[^=]+)?=\s*(?:frozenset\(|set\()?([\[{(])", line)
        if not m:
            continue
        depth, chunk = 0, []
        for ln in lines[i:i + 400]:
            chunk.append(ln)
            depth += sum(ln.count(c) for c in "[{(") - sum(ln.count(c) for c in "]})")
            if depth <= 0:
                break
        try:
            node = ast.parse("\n".join(chunk)).body[0].value
        except (SyntaxError, IndexError, AttributeError):
            continue
        if isinstance(node, ast.Call) and node.args:
            node = node.args[0]
        elts = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if elts:
            vals = {e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if vals:
                out[m.group(1)] = vals
    return out


def fallback_params(func, consts=None):
    """{NAME: allowed} for the parameters (model.NAME, getattr(model, "NAME")) whose value decides
    a raise UnsupportedOnGPU in FUNC; allowed is the set of string values that stay on the GPU
    where the test is `model.NAME not in VALUES` (or not (... model.NAME in VALUES)), else None."""
    consts = consts or {}
    params = {}
    model = func.args.args[1].arg if len(func.args.args) > 1 else "model"

    def param_of(n):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == model:
            return n.attr
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "getattr" and len(n.args) >= 2 \
                and getattr(n.args[0], "id", "") == model and isinstance(n.args[1], ast.Constant):
            return n.args[1].value
        return None

    def values(node):
        if isinstance(node, ast.Name):
            return consts.get(node.id)
        lit = literal_strings(node)
        if lit is None and isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            lit = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)} or None
        return lit

    def allowed_by(test, negated):
        """{param: allowed} read from a test that raises when true."""
        out = {}
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return allowed_by(test.operand, not negated)
        if isinstance(test, ast.BoolOp):
            for v in test.values:
                out.update(allowed_by(v, negated))
            return out
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            prm = param_of(test.left)
            op = type(test.ops[0])
            if prm and ((op is ast.NotIn and not negated) or (op is ast.In and negated)):
                out[prm] = values(test.comparators[0])
        return out

    def raises(body):
        return any(isinstance(n, ast.Raise) and "UnsupportedOnGPU" in ast.dump(n)
                   for s in body for n in ast.walk(s))

    def note(test, negated=False):
        found = {param_of(n) for n in ast.walk(test)} - {None}
        allowed = allowed_by(test, negated)
        for prm in found:
            if prm not in params or params[prm] is None:
                params[prm] = allowed.get(prm)

    for n in ast.walk(func):
        if isinstance(n, ast.If) and raises(n.body):
            note(n.test)
        if isinstance(n, ast.If) and raises(n.orelse):
            note(n.test, negated=True)
        if isinstance(n, ast.Try) and any(raises(h.body) for h in n.handlers):
            for stmt in n.body:
                for prm in {param_of(x) for x in ast.walk(stmt)} - {None}:
                    params.setdefault(prm, None)
    return params


def describe(v, e):
    if v == "port":
        return "a GPU path" + (f" ({e.get('target')})" if e and e.get("target") else "")
    if v == "nogpu":
        return "no GPU path"
    if v == "ignore":
        return "a CPU helper (ignore)"
    return "nothing (no entry: GPU900)"


# the namespaces NetworkX documents besides the top level (nx.community.louvain_communities)
NX_NAMESPACES = ("algorithms", "community", "bipartite", "approximation", "flow", "isomorphism",
                 "tree", "generators", "linalg", "operators")


def check_nx(src, libs, rep, versions):
    nx = libs["networkx"]
    path = os.path.join(src.site, "_nx_cugraph", "__init__.py")
    if not os.path.isfile(path):
        rep.cannot("nx-cugraph: _nx_cugraph/__init__.py missing")
        return
    tree = ast.parse(open(path).read())
    funcs = None
    for n in ast.walk(tree):
        if isinstance(n, ast.Dict):
            for k, v in zip(n.keys, n.values):
                if isinstance(k, ast.Constant) and k.value == "functions":
                    funcs = literal_strings(v)
    if not funcs:
        rep.cannot("nx-cugraph: no 'functions' set in _nx_cugraph/__init__.py")
        return
    ver = versions.get("nx-cugraph", "?")
    import networkx
    from networkx.utils.backends import _registered_algorithms as registered
    # the names a user writes for each dispatchable algorithm: networkx.X and networkx.M.X
    aliases = {}
    spaces = [("networkx", networkx)] + [
        (f"networkx.{m}", getattr(networkx, m)) for m in NX_NAMESPACES if hasattr(networkx, m)]
    for prefix, mod in spaces:
        for attr in dir(mod):
            obj = getattr(mod, attr, None)
            name = getattr(obj, "name", None)
            if not attr.startswith("_") and isinstance(name, str) and registered.get(name) is obj:
                aliases.setdefault(name, set()).add(f"{prefix}.{attr}")

    def tells_gpu(v, e):
        if v == "port":
            return (e or {}).get("target", nx.doc.get("target")) == "nx-cugraph"
        return v == "ignore" and "nx-cugraph" in (e or {}).get("message", "")

    for f in sorted(funcs):
        if "__" in f:
            continue  # the graph classes' constructors
        if f not in registered:
            rep.cannot(f"nx-cugraph implements {f}, which NetworkX {versions.get('networkx')} "
                       f"does not dispatch")
            continue
        orig = registered[f].orig_func
        rep.count("algorithms nx-cugraph implements")
        for name in sorted(aliases.get(f) or {f"{orig.__module__}.{orig.__name__}"}):
            rep.count("NetworkX names of them")
            v, e = nx.verdict(name)
            rep.facts.entry(nx, e, EXEC)
            if not tells_gpu(v, e):
                rep.add(nx.file, name, f"nx-cugraph {ver} implements it ({f}); the knowledge "
                                       f"says {describe(v, e)}")
    for e in nx.apis:
        n = e["name"]
        if "*" in n or not n.startswith("networkx."):
            continue
        obj = resolve(n)
        rep.facts.entry(nx, e, EXEC)
        if obj is None:
            rep.add(nx.file, n, f"NetworkX {versions.get('networkx', '?')} has no {n}")
            continue
        if e.get("ignore") or e.get("gpu") is False or inspect.isclass(obj):
            if e.get("gpu") is False and getattr(obj, "name", None) in funcs:
                rep.add(nx.file, n, f"nx-cugraph {ver} implements it; the knowledge says "
                                    f"no GPU path")
            continue
        if e.get("target", nx.doc.get("target")) != "nx-cugraph":
            continue
        if getattr(obj, "name", None) not in funcs:
            rep.add(nx.file, n, f"nx-cugraph {ver} does not implement it; the knowledge says "
                                f"it runs on the GPU")


def check_nx_fallbacks(src, libs, rep, versions):
    """Each fallback condition of networkx.json, asked of nx-cugraph's own BackendInterface.can_run
    (the decision NetworkX's dispatcher makes) with the values the condition names and others."""
    nx = libs["networkx"]
    ver = versions.get("nx-cugraph", "?")
    payload, where = {}, {}
    for e in nx.apis:
        if not e.get("fallback"):
            continue
        obj = resolve(e["name"])
        algo = getattr(obj, "name", None)
        if not isinstance(algo, str):
            continue
        for i, f in enumerate(e["fallback"]):
            # the values the condition names, and values of the kind the argument takes
            if "callable" in f:
                vals = [{"callable": True}, "weight"]
            elif "present" in f:
                vals = [{"callable": True}, {"dict": True}]
            elif "equals" in f:
                vals = f["equals"] + [not v for v in f["equals"] if isinstance(v, bool)]
            else:
                vals = f.get("not_in", []) + ["weight"]
            key = f"{algo}:{f['arg']}"
            payload[key] = {"algo": algo, "arg": f["arg"], "values": vals}
            where.setdefault(key, []).append((e, i, f))
    ex = run_worker(src.site, "nx", payload, rep)
    if ex is None:
        return
    for key, out in ex["runs"].items():
        for e, i, f in where[key]:
            if out.get("missing"):
                rep.add(nx.file, e["name"], f"NetworkX's {key.split(':')[0]} has no parameter "
                                            f"{f['arg']}=; the knowledge falls back on it")
                rep.facts.done(nx.file, e["name"], EXEC, i)
                continue

            def report(index, said, e=e, f=f):
                rep.add(nx.file, e["name"], f"nx-cugraph {ver}'s can_run for {key.split(':')[0]}"
                                            f"({f['arg']}=...) {said}; the knowledge's condition "
                                            f"{'does not' if index is None else 'says it falls back'}")
            for j in compare_tried(out["tried"], [(i, f)], report):
                rep.facts.done(nx.file, e["name"], EXEC, j)


def resolve(dotted):
    """The object DOTTED names, or None: attributes from the top-level module, importing a
    submodule where an attribute is missing (as `from a.b import c` would)."""
    parts = dotted.split(".")
    try:
        obj = importlib.import_module(parts[0])
    except ImportError:
        return None
    for i, p in enumerate(parts[1:], 1):
        try:
            has = hasattr(obj, p)
        except Exception:  # a module __getattr__ that refuses (an experimental name)
            has = False
        if has:
            obj = getattr(obj, p)
            continue
        # the prefix as a module (an attribute may hide it), then the name in it
        try:
            mod = importlib.import_module(".".join(parts[:i]))
            obj = getattr(mod, p) if hasattr(mod, p) else importlib.import_module(".".join(parts[: i + 1]))
        except Exception:
            return None
    return obj


def check_cucim(src, libs, rep, versions):
    sk = libs["skimage"]
    ver = versions.get("cucim", "?")
    skver = versions.get("scikit-image", "?")
    top_names, _ = src.names("skimage")
    if top_names is None:
        rep.cannot("scikit-image not installed")
        return
    modules = [""] + sorted(m for m in top_names if src.is_package("skimage." + m))
    for m in modules:
        cpu_mod = "skimage" + ("." + m if m else "")
        gpu_mod = "cucim.skimage" + ("." + m if m else "")
        cpu, _ = src.names(cpu_mod)
        gpu, gpu_complete = src.names(gpu_mod)
        if not cpu:
            continue
        for n in sorted(cpu):
            if src.is_package(f"{cpu_mod}.{n}") or n in ("test",) or n.isupper():
                continue
            name = f"{cpu_mod}.{n}"
            rep.count("scikit-image names against cucim.skimage")
            v, e = sk.verdict(name)
            rep.facts.entry(sk, e, SOURCE)
            has = gpu is not None and n in gpu
            if v == "port" and not has and (gpu is None or gpu_complete):
                target = sk.gpu_name(name, e)
                if target and target != f"{gpu_mod}.{n}" and src.exists(target):
                    continue  # ported to another name, which exists
                rep.add(sk.file, name, f"cuCIM {ver} has no {gpu_mod}.{n}; the knowledge "
                                       f"says {describe(v, e)}")
            elif v == "nogpu" and has:
                rep.add(sk.file, name, f"cuCIM {ver} has {gpu_mod}.{n}; the knowledge says "
                                       f"{describe(v, e)}")
            elif v == "none":
                rep.add(sk.file, name, f"scikit-image {skver} has it; the knowledge has no "
                                       f"verdict (GPU900)")


def check_numpy(src, libs, rep, versions):
    np_lib = libs["numpy"]
    ver = versions.get("cupy", "?")
    for mod in ("numpy", "numpy.linalg", "numpy.fft", "numpy.random"):
        for n, obj in sorted(runtime_public(mod).items()):
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                continue
            name = f"{mod}.{n}"
            rep.count("NumPy functions against CuPy")
            v, e = np_lib.verdict(name)
            rep.facts.entry(np_lib, e, SOURCE)
            gpu = np_lib.gpu_name(name, e) if v == "port" else "cupy" + name[len("numpy"):]
            if gpu and gpu.split(".")[0] not in ("cupy", "cupyx"):
                continue  # another GPU library (kvikio.numpy.fromfile)
            has = src.exists(gpu) if gpu else None
            if v == "port" and has is False:
                rep.add(np_lib.file, name, f"CuPy {ver} has no {gpu}; the knowledge says "
                                           f"{describe(v, e)}")
            elif v == "nogpu" and has is True and not (e or {}).get("flow") == "converts":
                rep.add(np_lib.file, name, f"CuPy {ver} has {gpu}; the knowledge says "
                                           f"{describe(v, e)}")
            elif v == "none":
                rep.add(np_lib.file, name, f"NumPy {versions.get('numpy', '?')} has it; the "
                                           f"knowledge has no verdict (GPU900)")


def check_scipy(src, libs, rep, versions):
    sp = libs["scipy"]
    ver = versions.get("cupy", "?")
    gpu_top, _ = src.names("cupyx.scipy")
    import scipy
    for sub in sorted(getattr(scipy, "__all__", [])):
        if sub not in gpu_top:
            continue  # a SciPy module CuPy does not cover: the knowledge's glob decides
        mods = [f"scipy.{sub}"]
        for extra in ("linalg", "csgraph", "distance", "windows"):
            if src.module_file(f"cupyx.scipy.{sub}.{extra}") not in (None,):
                mods.append(f"scipy.{sub}.{extra}")
        for mod in mods:
            try:
                names = runtime_public(mod)
            except ImportError as ex:
                rep.cannot(f"{mod}: {ex}")
                continue
            for n, obj in sorted(names.items()):
                if inspect.isclass(obj) and issubclass(obj, BaseException):
                    continue
                name = f"{mod}.{n}"
                rep.count("SciPy functions against cupyx.scipy")
                v, e = sp.verdict(name)
                rep.facts.entry(sp, e, SOURCE)
                gpu = sp.gpu_name(name, e) if v == "port" else "cupyx." + name
                has = src.exists(gpu) if gpu else None
                if v == "port" and has is False:
                    rep.add(sp.file, name, f"CuPy {ver} has no {gpu}; the knowledge says "
                                           f"{describe(v, e)}")
                elif v == "nogpu" and has is True:
                    rep.add(sp.file, name, f"CuPy {ver} has {gpu}; the knowledge says "
                                           f"{describe(v, e)}")
                elif v == "none":
                    rep.add(sp.file, name, f"SciPy {versions.get('scipy', '?')} has it; the "
                                           f"knowledge has no verdict (GPU900)")


def check_cudf(src, libs, rep, versions):
    pd_lib = libs["pandas"]
    ver = versions.get("cudf", "?")
    cudf_names, complete = src.names("cudf")
    if cudf_names is None:
        rep.cannot("cudf not installed")
        return
    for n, obj in sorted(runtime_public("pandas").items()):
        if inspect.isclass(obj):
            continue  # classes: the methods decide, checked by cudf.pandas at run time
        name = f"pandas.{n}"
        rep.count("pandas functions against cudf")
        v, e = pd_lib.verdict(name)
        rep.facts.entry(pd_lib, e, SOURCE)
        if v == "port" and n not in cudf_names and complete:
            rep.add(pd_lib.file, name, f"cuDF {ver} has no cudf.{n}: under cudf.pandas the "
                                       f"call runs through pandas on the CPU; the knowledge says "
                                       f"{describe(v, e)}")
        elif v == "none":
            rep.add(pd_lib.file, name, f"pandas {versions.get('pandas', '?')} has it; the "
                                       f"knowledge has no verdict (GPU900)")


def check_gpu_names(src, libs, rep, versions):
    """Every GPU function a finding names (gpu_name, gpu_prefix) exists in its package."""
    roots = {"cupy", "cupyx", "cucim", "cuml", "cudf", "nx_cugraph"}
    for lib in libs.values():
        for e in lib.apis:
            if "*" in e["name"] or e.get("ignore") or e.get("gpu") is False:
                continue
            gpu = lib.gpu_name(e["name"], e)
            if not gpu or gpu.split(".")[0] not in roots:
                continue
            rep.count("GPU names the findings give")
            if src.exists(gpu) is not None:
                rep.facts.entry(lib, e, SOURCE)
            if src.exists(gpu) is False:
                rep.add(lib.file, e["name"], f"the knowledge names {gpu}, which the installed "
                                             f"package does not have")
    # the names of the GPU libraries' own entries (cupy.json: what synchronizes, copies, ...)
    for lib in libs.values():
        for e in lib.apis:
            n = e["name"]
            if "*" in n or n.split(".")[0] not in ("cupy", "cupyx"):
                continue
            if src.exists(n) is not None:
                rep.facts.entry(lib, e, SOURCE)
            if src.exists(n) is False:
                rep.add(lib.file, n, f"CuPy {versions.get('cupy', '?')} has no {n}")


GPU_ROOTS = ("cupy", "cupyx", "cudf", "cucim")


def source_glob_exists(src, pattern):
    """glob_exists for a library read as source: a module's names, then a class's members;
    None where the source cannot say (a wildcard over modules)."""
    parts = pattern.split(".")
    k = next(i for i, p in enumerate(parts) if any(c in p for c in "*?["))
    mod = ".".join(parts[:k])
    if src.module_file(mod) is None:
        return False
    names, _ = src.names(mod)
    rest = parts[k:]
    if names is None:
        return False
    if len(rest) == 1:
        return any(fnmatch.fnmatchcase(x, rest[0]) for x in names) or \
            rest[0] == "*"  # the module itself exists: mod.* names all its contents
    if len(rest) == 2:
        for c in names:
            if fnmatch.fnmatchcase(c, rest[0]) and c[:1].isupper():
                members = src.class_members(mod, c)
                if members and any(fnmatch.fnmatchcase(m, rest[1]) for m in members):
                    return True
        return False
    return None


def glob_exists(pattern):
    """Whether some name the imported library has matches PATTERN, one dotted level at a time
    from its longest literal prefix (scipy.linalg.[A-Z]*.* : a method of a class of it)."""
    parts = pattern.split(".")
    k = next(i for i, p in enumerate(parts) if any(c in p for c in "*?["))
    objs = [resolve(".".join(parts[:k]))]
    for seg in parts[k:]:
        nxt = []
        for o in objs:
            if o is None:
                continue
            for a in dir(o):
                if fnmatch.fnmatchcase(a, seg) and len(nxt) < 400:
                    try:
                        nxt.append(getattr(o, a))
                    except Exception:
                        continue
        objs = nxt
        if not objs:
            return False
    return True


def check_rest(src, libs, rep, versions):
    """The facts no check above reached, in libraries this interpreter can import: a CPU helper
    or glob exists (the library imported, the name resolved); a port names a GPU function its
    package has (a no-GPU-path entry one it lacks), read as source; a fallback condition on a
    GPU function's argument: the function, imported in a worker, does not take the argument, or
    raises in a branch that reads it."""
    import importlib.util
    importable = {}

    def can_import(top):
        if top not in importable:
            try:
                importable[top] = importlib.util.find_spec(top) is not None and \
                    importlib.import_module(top) is not None
            except Exception:  # present but not importable here (skimage without lazy_loader)
                importable[top] = False
        return importable[top]

    pending_fb = []
    for lib in libs.values():
        for e in lib.apis:
            n = e["name"]
            f = rep.facts.facts.get((lib.file, n, None))
            top = n.split(".")[0]
            if f is not None and not f["how"] and not can_import(top) and \
                    src.module_file(top) not in (None, "compiled") and not any(c in n for c in "*?["):
                has = src.exists(n)  # installed but not importable here: read as source
                if has is False and f["mark"]:
                    pass  # the data says why it cannot be checked
                elif has is not None:
                    if has is False:
                        rep.add(lib.file, n, f"{top} (read as source) has no {n}")
                    rep.facts.entry(lib, e, SOURCE)
            if f is not None and not f["how"] and not can_import(top) and any(c in n for c in "*?[") \
                    and src.module_file(top) not in (None, "compiled"):
                found = source_glob_exists(src, n)
                if found is not None:
                    if not found:
                        rep.note(f"{lib.file}: {n} matches no name {top} has now (read as source): "
                                 f"it decides nothing")
                    rep.facts.entry(lib, e, SOURCE)
            if f is not None and not f["how"] and can_import(top) and top != "builtins":
                glob_ = any(c in n for c in "*?[")
                exists = glob_exists(n) if glob_ else resolve(n) is not None
                if not exists and glob_:
                    rep.note(f"{lib.file}: {n} matches no name {top} has now: it decides nothing")
                    rep.facts.entry(lib, e, EXEC)
                elif not exists and f["mark"]:
                    pass  # the data says why it cannot be checked (a name an older release had)
                elif glob_:
                    rep.facts.entry(lib, e, EXEC)
                elif not exists:
                    rep.add(lib.file, n, f"{top} {versions.get(top, '')} has no {n}".replace("  ", " "))
                    rep.facts.entry(lib, e, EXEC)
                elif e.get("ignore"):
                    rep.facts.entry(lib, e, EXEC)
                else:
                    gpu = lib.gpu_name(n, e) if not glob_ else None
                    if gpu is None and not glob_ and lib.doc.get("target") in ("cupy", "cucim"):
                        gpu = {"numpy": "cupy", "scipy": "cupyx.scipy",
                               "skimage": "cucim.skimage"}.get(top, "") + n[len(top):]
                    if gpu is None and lib.doc.get("target") == "cudf.pandas" and \
                            e.get("target", "cudf.pandas") == "cudf.pandas" and \
                            e.get("gpu") is not False:  # cuDF may have a method that only raises
                        gpu = "cudf" + n[len(top):]
                    if gpu and gpu.split(".")[0] in GPU_ROOTS:
                        has = src.exists(gpu)
                        if has is not None and f["mark"] and has != (e.get("gpu") is not False):
                            pass  # the data says why this comparison cannot decide
                        elif has is not None:
                            if e.get("gpu") is False and has:
                                rep.add(lib.file, n, f"the installed package has {gpu}; the "
                                                     f"knowledge says {describe('nogpu', e)}")
                            elif e.get("gpu") is not False and not has:
                                rep.add(lib.file, n, f"the installed package has no {gpu}; "
                                                     f"the knowledge says {describe('port', e)}")
                            rep.facts.entry(lib, e, SOURCE)
            for i, fb in enumerate(e.get("fallback", [])):
                ff = rep.facts.facts.get((lib.file, n, i))
                if ff is None or ff["how"] or ff["mark"]:
                    continue
                gpu = lib.gpu_name(n, e)
                if gpu and gpu.split(".")[0] in GPU_ROOTS:
                    pending_fb.append((lib, e, i, fb, gpu))
    if not pending_fb:
        return
    ex = run_worker(src.site, "resolve", {"names": [], "functions": sorted({p[4] for p in pending_fb})}, rep)
    if ex is None:
        return
    for lib, e, i, fb, gpu in pending_fb:
        info = ex["functions"].get(gpu)
        if info is None or info["params"] is None:
            continue
        if fb["arg"] not in info["params"]:
            rep.facts.done(lib.file, e["name"], EXEC, i)  # the GPU function has no such argument
            continue
        if not info["source"]:
            continue
        decided = raising_tests(info["source"], fb["arg"])
        if decided is None:
            continue
        if decided is False:
            rep.add(lib.file, e["name"], f"{gpu} takes {fb['arg']}= and raises on no value of it; "
                                         f"the knowledge says some values fall back (fallback #{i})")
        rep.facts.done(lib.file, e["name"], SOURCE, i)


def read_accepted(path):
    accepted = {}
    if os.path.isfile(path):
        for line in open(path):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3:
                accepted[(parts[0], parts[1])] = parts[2]
    return accepted


def accepted_reason(rep, file, name, text):
    """The reason an accepted-disagreements line gives for this one, or None. The name column is
    NAME, or NAME and a text the disagreement must contain (`sklearn.svm.SVC kernel=`), so that
    accepting one disagreement of an entry does not accept every other one."""
    for (f, key), why in rep.accepted.items():
        n, _, must = key.partition(" ")
        if f == file and n == name and must in text:
            rep.used.add((f, key))
            return why
    return None


def default_site():
    cands = glob.glob(os.path.join(ROOT, ".venv", "lib", "python3*", "site-packages"))
    return cands[0] if cands else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", default=default_site(), help="site-packages holding the packages (.venv's)")
    ap.add_argument("--data", default=os.path.join(ROOT, "data"), help="gpuopt's data folder")
    ap.add_argument("--accepted", default=os.path.join(ROOT, "tools", "check_knowledge_accepted.tsv"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)  # run package code (run_worker)
    args = ap.parse_args()
    if args.worker:
        return worker_main(args.worker)
    if not args.site or not os.path.isdir(args.site):
        sys.stderr.write("check_knowledge: no .venv site-packages: run scripts/setup.sh\n")
        return 2
    if os.path.realpath(args.site) not in map(os.path.realpath, sys.path):
        sys.path.insert(0, args.site)
    versions = dist_versions(args.site)
    read, missing = [], []
    for pkg, dists in GPU_DISTS.items():
        have = next((d for d in dists if d in versions), None)
        if have:
            versions[pkg] = versions[have]
            read.append(f"{have} {versions[have]}")
        else:
            missing.append(" or ".join(dists))
    for d in CPU_DISTS:
        if d in versions:
            read.append(f"{d} {versions[d]}")
        else:
            missing.append(d)
    if missing:
        sys.stderr.write(f"check_knowledge: {args.site}: missing {', '.join(missing)} "
                         f"(requirements/*.txt; run scripts/setup.sh)\n")
        return 2
    print("read: " + ", ".join(read))
    libs = load_knowledge(args.data)
    src = Source(args.site)
    rep = Report(read_accepted(args.accepted))
    rep.facts = Facts(libs)
    for check in (check_cuml, check_nx, check_nx_fallbacks, check_cucim, check_numpy, check_scipy, check_cudf,
                  check_gpu_names, check_rest):
        check(src, libs, rep, versions)
    print("compared: " + ", ".join(f"{n} {what}" for what, n in rep.counts.items()))
    left = accepted = 0
    seen = set()
    for file, name, text in rep.items:
        if (file, name, text) in seen:
            continue
        seen.add((file, name, text))
        why = accepted_reason(rep, file, name, text)
        if why is not None:
            accepted += 1
            print(f"accepted: {file}: {name}: {text} ({why})")
        else:
            left += 1
            print(f"{file}: {name}: {text}")
    for what in rep.unreadable:
        print(f"could not read: {what}")
    for what in rep.notes:
        print(f"note: {what}")
    for key in sorted(set(rep.accepted) - rep.used):
        print(f"stale acceptance (no such disagreement now): {key[0]}: {key[1]}")
    n, reasons, skipped = rep.facts.summary()
    for reason, k in sorted(reasons.items(), key=lambda r: (-r[1], r[0])):
        print(f"uncheckable: {k} fact(s): {reason}")
    for key in skipped:
        print(f"skipped (no check reached it, and the data gives no reason): {fact_name(key)}")
    total = len(rep.facts.facts)
    print(f"facts: {total} in all, checked by executing package code: {n[EXEC]}, by reading "
          f"source: {n[SOURCE]}, marked uncheckable: {n['uncheckable']} "
          f"({len(reasons)} reason(s) listed), skipped: {len(skipped)}")
    print(f"{left} disagreement(s), {accepted} accepted, {len(rep.unreadable)} unreadable")
    return 1 if left or rep.unreadable or skipped or set(rep.accepted) - rep.used else 0


if __name__ == "__main__":
    sys.exit(main())
