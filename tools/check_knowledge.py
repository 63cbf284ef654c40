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


# ---------------------------------------------------------------- the checks

class Report:
    def __init__(self, accepted):
        self.items = []
        self.accepted = accepted
        self.used = set()
        self.unreadable = []
        self.counts = {}

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
    for name, (rel, _node, _imp, _cl) in sorted(accelerated.items()):
        rep.count("estimators cuml.accel proxies")
        v, e = sk.verdict(name)
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
    # fallbacks on constructor parameters
    for name, (rel, node, imported, classes) in sorted(accelerated.items()):
        e = sk.lookup(name)
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
    # every scikit-learn name the knowledge gives exists in scikit-learn
    for e in sk.apis:
        n = e["name"]
        if not n.startswith("sklearn.") or "*" in n:
            continue
        parts = n.split(".")
        if parts[-2][:1].isupper():
            parts = parts[:-1]  # a method: check its class
        if src.exists(".".join(parts)) is False:
            rep.add(sk.file, n, f"scikit-learn {versions.get('scikit-learn', '?')} has no "
                                f"{'.'.join(parts)}")


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
            if not tells_gpu(v, e):
                rep.add(nx.file, name, f"nx-cugraph {ver} implements it ({f}); the knowledge "
                                       f"says {describe(v, e)}")
    for e in nx.apis:
        n = e["name"]
        if "*" in n or not n.startswith("networkx."):
            continue
        obj = resolve(n)
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


def resolve(dotted):
    """The object DOTTED names, or None: attributes from the top-level module, importing a
    submodule where an attribute is missing (as `from a.b import c` would)."""
    parts = dotted.split(".")
    try:
        obj = importlib.import_module(parts[0])
    except ImportError:
        return None
    for i, p in enumerate(parts[1:], 1):
        if hasattr(obj, p):
            obj = getattr(obj, p)
            continue
        # the prefix as a module (an attribute may hide it), then the name in it
        try:
            mod = importlib.import_module(".".join(parts[:i]))
            obj = getattr(mod, p) if hasattr(mod, p) else importlib.import_module(".".join(parts[: i + 1]))
        except ImportError:
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
            if src.exists(gpu) is False:
                rep.add(lib.file, e["name"], f"the knowledge names {gpu}, which the installed "
                                             f"package does not have")
    # the names of the GPU libraries' own entries (cupy.json: what synchronizes, copies, ...)
    for lib in libs.values():
        for e in lib.apis:
            n = e["name"]
            if "*" in n or n.split(".")[0] not in ("cupy", "cupyx"):
                continue
            if src.exists(n) is False:
                rep.add(lib.file, n, f"CuPy {versions.get('cupy', '?')} has no {n}")


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


def default_site():
    cands = glob.glob(os.path.join(ROOT, ".venv", "lib", "python3*", "site-packages"))
    return cands[0] if cands else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", default=default_site(), help="site-packages holding the packages (.venv's)")
    ap.add_argument("--data", default=os.path.join(ROOT, "data"), help="gpuopt's data folder")
    ap.add_argument("--accepted", default=os.path.join(ROOT, "tools", "check_knowledge_accepted.tsv"))
    args = ap.parse_args()
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
    for check in (check_cuml, check_nx, check_cucim, check_numpy, check_scipy, check_cudf,
                  check_gpu_names):
        check(src, libs, rep, versions)
    print("compared: " + ", ".join(f"{n} {what}" for what, n in rep.counts.items()))
    left = accepted = 0
    seen = set()
    for file, name, text in rep.items:
        if (file, name, text) in seen:
            continue
        seen.add((file, name, text))
        why = rep.accepted.get((file, name))
        if why is not None:
            accepted += 1
            rep.used.add((file, name))
            print(f"accepted: {file}: {name}: {text} ({why})")
        else:
            left += 1
            print(f"{file}: {name}: {text}")
    for what in rep.unreadable:
        print(f"could not read: {what}")
    for key in sorted(set(rep.accepted) - rep.used):
        print(f"stale acceptance (no such disagreement now): {key[0]}: {key[1]}")
    print(f"{left} disagreement(s), {accepted} accepted, {len(rep.unreadable)} unreadable")
    return 1 if left or rep.unreadable or set(rep.accepted) - rep.used else 0


if __name__ == "__main__":
    sys.exit(main())
