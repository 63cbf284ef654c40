"""A project's modules scanned together: a loop in one file that calls a
helper in another makes the helper hot, through relative and package
imports, methods of the project's classes and notebooks; scanned alone, the
helper is cold (issue 14: "loops in another file")."""
import json

from conftest import run

HELPERS = """import cupy as cp


def process(x):
    return _pad(x), 1


def _pad(x):
    return int(cp.ceil(x.shape[0] / 32.0)) + x.sum().item()


class Filters:
    def apply(self, x):
        return float(x.max())
"""

DRIVER = """import cupy as cp
from .helpers import process
from pkg import helpers


class Conveyor:
    def __init__(self):
        self.filters = helpers.Filters()

    def run(self, chunks):
        for chunk in chunks:
            data = cp.asarray(chunk)
            process(data)
            self.filters.apply(data)
"""


def project(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(HELPERS)
    (pkg / "driver.py").write_text(DRIVER)
    return pkg


def gpu601(doc, name):
    return sorted({(f["line"], f["rank"], f["rank_reason"]) for f in doc["findings"]
                   if f["rule"] == "GPU601" and f["path"].endswith(name)})


def test_helper_in_another_module_is_hot(tmp_path):
    pkg = project(tmp_path)
    r = run("scan", "--format", "json", "--fail-on", "never", pkg)
    assert r.rc == 0, r
    found = gpu601(r.json(), "helpers.py")
    assert [line for line, _, _ in found] == [9, 14], found
    for line, rank, reason in found:
        assert rank == 1
        assert "called from a loop in" in reason and "driver.py at line 11" in reason, reason


def test_helper_alone_is_cold(tmp_path):
    pkg = project(tmp_path)
    r = run("scan", "--format", "json", "--fail-on", "never", pkg / "helpers.py")
    assert gpu601(r.json(), "helpers.py") == []


def test_notebook_loop_calls_a_module(tmp_path):
    pkg = project(tmp_path)
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["import cupy as cp\n", "from pkg.helpers import process\n"]},
                    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["for i in range(1000):\n", "    process(cp.ones(64))\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "run.ipynb").write_text(json.dumps(nb))
    r = run("scan", "--format", "json", "--fail-on", "never", pkg / "helpers.py", tmp_path / "run.ipynb")
    found = gpu601(r.json(), "helpers.py")
    assert [line for line, _, _ in found] == [9], found
    assert "run.ipynb" in found[0][2]


# DINO's shape: a module of the project sent to the GPU and wrapped in
# DistributedDataParallel, handed each step to a helper in another file
# that reads every parameter's gradient norm back (utils.clip_gradients).
CLIP = """import torch


def clip_gradients(model, clip):
    norms = []
    for name, p in model.named_parameters():
        if p.grad is not None:
            param_norm = p.grad.data.norm(2)
            norms.append(param_norm.item())
    return norms


class Wrapper:
    def __init__(self, backbone):
        self.backbone = backbone
"""

TRAIN = """import torch
import torch.nn as nn
from . import utils


def train_one_epoch(student, loader, clip):
    for images in loader:
        loss = student(images.cuda()).sum()
        loss.backward()
        norms = utils.clip_gradients(student, clip)


def main(loader, clip, wrap):
    student = utils.Wrapper(nn.Linear(4, 4))
    student = student.cuda()
    if wrap:
        student = nn.SyncBatchNorm.convert_sync_batchnorm(student)
    student = nn.parallel.DistributedDataParallel(student, device_ids=[0])
    for epoch in range(10):
        train_one_epoch(student, loader, clip)


main([], 1.0, True)
"""


def package(tmp_path, name, files):
    """A package of these files (name -> text), scanned as one project: the JSON report."""
    pkg = tmp_path / name
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    for fn, text in files.items():
        (pkg / fn).write_text(text)
    r = run("scan", "--format", "json", "--fail-on", "never", pkg)
    assert r.rc == 0, r
    return r


def test_module_on_the_gpu_passed_to_another_file(tmp_path):
    r = package(tmp_path, "dino", {"utils.py": CLIP, "train.py": TRAIN})
    assert [line for line, _, _ in gpu601(r.json(), "utils.py")] == [9], r.json()["findings"]
    # the same helper given a module left on the host: nothing
    r = package(tmp_path, "dino", {"train.py": TRAIN.replace("    student = student.cuda()\n", "")})
    assert gpu601(r.json(), "utils.py") == []


# A helper in another file whose return the scan of that file could not
# know (its arguments unknown there) gives device tensors when it is given
# them: DINO's and the ImageNet example's utils.accuracy.
ACCURACY = """import torch


def accuracy(output, target, topk=(1,)):
    _, pred = output.topk(max(topk), 1, True, True)
    correct = pred.t().eq(target.reshape(1, -1))
    return [correct[:k].reshape(-1).float().sum(0) for k in topk]


def split(output):
    return output.argmax(1), output.shape[0]
"""

VALIDATE = """import torch
from . import metrics


def validate(model, loader):
    model = model.cuda()
    for inp, target in loader:
        output = model(inp.cuda())
        acc1, acc5 = metrics.accuracy(output, target.cuda(), topk=(1, 5))
        print(acc1.item(), acc5.item())
        pred, n = metrics.split(output)
        print(n + 1)
"""


def test_helper_given_device_tensors_in_another_file(tmp_path):
    r = package(tmp_path, "evalpkg", {"metrics.py": ACCURACY, "validate.py": VALIDATE})
    # acc1.item() and acc5.item(); nothing for the host count that split() returns beside
    assert [line for line, _, _ in gpu601(r.json(), "validate.py")] == [10], r.json()["findings"]
