# Full-graph training (PyTorch Geometric's examples, the GCN example): the
# "epoch" loop makes one optimizer step per iteration, so what it reads back
# per epoch it reads per step. An epoch that runs a loop over batches (in
# its own body or in the function it calls) is an epoch of many steps: once
# per epoch is fine there.
import torch  # expect: GPU501/-
import torch.nn.functional as F

device = torch.device("cuda")
model = torch.nn.Linear(16, 4).to(device)
optimizer = torch.optim.Adam(model.parameters())
x = torch.randn(100, 16, device=device)
y = torch.randint(0, 4, (100,), device=device)


def train():
    model.train()
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return float(loss.detach())  # expect: GPU601


def test():
    pred = model(x).argmax(dim=-1)
    accs = []
    for mask in [x[:, 0] > 0, x[:, 1] > 0]:
        accs.append(int((pred == y).sum()))  # expect: GPU601
    return accs


def train_epoch(loader):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb.to(device)), yb.to(device))
        loss.backward()
        optimizer.step()
    return float(loss)


for epoch in range(1, 201):
    loss = train()
    train_acc, val_acc = test()
    print(f"epoch {epoch}: {loss:.4f} {train_acc} {val_acc}")

for epoch in range(10):
    print(train_epoch([]))
