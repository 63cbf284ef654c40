# PyTorch training and evaluation loops as real code writes them (GPU601,
# GPU602, GPU603): the device is a variable, tensors move with .to(device),
# models and losses keep them on the GPU; and the forms that are fine.
import time

import torch  # expect: GPU501/-
import torch.nn as nn
import torch.nn.functional as F


def train(model, device, loader, optimizer, log_interval=10):
    model.train()
    total = 0.0
    for batch_idx, (data, target) in enumerate(loader):
        data, target = data.to(device), target.to(device)  # each batch: fine
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        total += loss.item()  # expect: GPU601
        if batch_idx % log_interval == 0:
            print("loss", loss.item())  # every log_interval batches: fine
    return total


def test(model, device, loader):
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            pred = model(data).argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()  # expect: GPU601
            n = data.size(0)  # host metadata: fine
    return correct


def main(loader, epochs=10):
    device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    model = nn.Linear(4, 2).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    t0 = time.time()
    for epoch in range(epochs):
        train(model, device, loader, optimizer)
        test(model, device, loader)
        print(f"epoch {epoch}: {time.time() - t0:.1f} s")  # train() ends on .item(): synchronized, fine
        sample = torch.randn(64, 4).to(device)  # once per epoch: fine
        print(model(sample).cpu())  # once per epoch: fine
    for step in range(1000):
        ones = torch.ones(64, 1).to(device)  # expect: GPU602
        out = criterion(model(torch.randn(64, 4).to(device)), ones)
        t1 = time.time()  # expect: GPU603
        print(out.item())  # expect: GPU601


def elementwise(y, device):
    for idx, y_samp in enumerate(y.to(device)):
        print(y_samp.item())  # expect: GPU601


def optimizer_groups(model, loader, epochs, scheduler_patience=5):
    # an optimizer and its scheduler, made from the model's parameters, are
    # host objects: their learning rates are Python floats, and making them
    # queues no GPU work before a clock read
    model = model.cuda()
    t0 = time.perf_counter()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=scheduler_patience)
    print(f"setup took {time.perf_counter() - t0:.3f}s")
    for epoch in range(epochs):
        for x in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
        for group in optimizer.param_groups:
            print(group["lr"])
        scheduler.step(loss.item())
