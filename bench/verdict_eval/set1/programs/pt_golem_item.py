"""Mini-batch classifier training that reads the loss back to the host twice per step.

Imitates: elzbietakar/GOLEM_mini_projekt:train_epoch.py (train_epoch: after
optimizer.step() every mini-batch does `running_loss += loss.item()` and
`mean_loss += loss.item()`, printing every 100 batches).

The batches already live on the GPU (no loader copies); thousands of small steps each
end with two .item() calls, each a synchronizing device->host copy of one float.
"""
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def make_batches(n_batches, batch_size, n_features, n_classes, seed=0):
    gen = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(n_batches, batch_size, n_features, device=device, generator=gen)
    teacher = torch.randn(n_features, n_classes, device=device, generator=gen)
    y = (x @ teacher).argmax(dim=-1)
    return list(zip(x.unbind(0), y.unbind(0)))


def train_epoch(model, criterion, optimizer, loader, epoch_id):
    running_loss = 0.0
    mean_loss = 0.0
    counter = 0
    for i, (inputs, labels) in enumerate(loader):
        model.train()
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        running_loss += loss.item()
        mean_loss += loss.item()
        counter += 1
        if i % 100 == 99:
            print(f"[{epoch_id + 1}, {i + 1:5d}] loss: {running_loss / 100:.3f}")
            running_loss = 0.0
    return mean_loss / counter


def main():
    torch.manual_seed(0)
    loader = make_batches(n_batches=100, batch_size=8192, n_features=256, n_classes=16)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 16)).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(30):
        mean = train_epoch(model, criterion, optimizer, loader, epoch)
    print(f"final epoch mean loss {mean:.4f}")


if __name__ == "__main__":
    main()
