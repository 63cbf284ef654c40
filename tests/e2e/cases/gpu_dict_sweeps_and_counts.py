# A loop over a dict's entries (meters, losses, options) or over types of a
# case (IoU types) is a sweep over cases, cold; the batch loop around it stays
# hot. fvcore's flop counts are Python ints (the kb), whatever the model is on.
import torch  # expect: GPU501/-
from fvcore.nn import FlopCountAnalysis, flop_count_str

w = torch.ones(8, device="cuda")


class Logger:
    def __init__(self):
        self.meters = {"loss": w.sum(), "acc": w.mean()}

    def sync(self):
        for name, meter in self.meters.items():
            t = torch.tensor([1.0, 2.0], device="cuda")
            print(name, t.tolist())  # once per meter: fine
        for meter in self.meters.values():
            print((w * meter).sum().item())  # fine


def evaluate(loader, iou_types):
    for iou_type in iou_types:
        print(w.sum().item())  # once per IoU type: fine
    for batch in loader:
        losses = {"l1": (w * batch).sum(), "l2": (w * batch).mean()}
        for k in losses.keys():
            print(k, (w * batch).sum().item())  # expect: GPU601


def profile(model, n):
    x = torch.ones((1, 3), device="cuda")
    for i in range(n):
        fca = FlopCountAnalysis(model, x)
        print(flop_count_str(fca))  # a string: fine
        print(round(fca.total() / 1e9, 2))  # an int: fine
        print(w.sum().item())  # expect: GPU601
