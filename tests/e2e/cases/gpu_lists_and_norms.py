# Lists and dicts of device values: a comprehension over device batches,
# {k: v.to(device) for ...} (and a list of those), a list that grows by
# .append or += [v], batches taken with next(iter(loader)); and the
# total norm that clip_grad_norm_ returns, a tensor on the gradients'
# device. Each read back per step is a copy that waits for the GPU. A value
# already made a float (g.item() if isinstance(g, torch.Tensor) else g),
# a host list, a dict's keys or shapes, or one read after the loop are fine.
import torch  # expect: GPU501/-
from accelerate import Accelerator


def train(model, loader, optimizer, steps):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    it = iter(loader)
    for step in range(steps):
        batches = []
        for _ in range(4):
            batches += [next(it)]
        count = sum([(b["labels"] != -100).sum() for b in batches])
        n = accelerator.gather(count).sum().item()  # expect: GPU601
        losses = []
        for b in batches:
            loss = model(**b).loss / n
            accelerator.backward(loss)
            losses.append(loss.detach())
        norm = accelerator.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total = sum(losses).item()  # expect: GPU601
        norm = norm.item() if isinstance(norm, torch.Tensor) else norm  # expect: GPU601
        print(f"step {step}: loss {total:.3f} norm {norm:.3f}")


def plain_torch(model, data, optimizer, epochs):
    model = model.cuda()
    for epoch in range(epochs):
        for x in data:
            loss = model(x.cuda()).sum()
            loss.backward()
            gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            print(f"grad norm {gnorm:.4f}")  # expect: GPU601


def on_host(values, epochs):
    for epoch in range(epochs):
        seen = []
        for v in values:
            seen.append(float(v))
        print(sum(seen))
        parts = [v * 2 for v in values]
        print(parts[0])


def evaluate(model, loader, device="cuda"):
    # a dict of device tensors per batch, and a list of such dicts
    for batch, targets in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
        out = model(**batch)
        print(batch["labels"].sum().item())  # expect: GPU601
        ids = {t["image_id"].item(): o for t, o in zip(targets, out)}  # expect: GPU601
        for key in batch:
            print(key)
        for name, value in batch.items():
            print(name, value.shape)
        sizes = {k: len(v) for k, v in batch.items()}
        print(sizes["labels"])


def detr_losses(model, criterion, loader):
    # a loss function that returns a dict of device losses (the model takes
    # it for a tensor): its keys are strings, its values device tensors
    model = model.cuda()
    for samples, targets in loader:
        loss_dict = criterion(model(samples.cuda()), targets)
        named = {f"{k}_unscaled": v for k, v in loss_dict.items()}
        for k, v in loss_dict.items():
            print(f"{k}: {v.item():.3f}")  # expect: GPU601
        print(sorted(loss_dict.keys()))
