"""Chest-X-ray style CNN training loop whose per-batch accuracy metric lives in a helper
module; the helper pulls the correct count to the host with .item() on every batch.

Imitates: adrianskrzypnik/xray-nn:train.py (per batch `train_acc += accuracy(outputs,
labels)` with `from utils.metrics import accuracy`), the metric itself being
adrianskrzypnik/xray-nn:utils/metrics.py (`(preds == target).sum().item()`). Here the
running loss is kept on the device, so the helper's .item() is the per-step host copy.
"""
import torch
import torch.nn.functional as F

from pt_xray_acc_helper import accuracy


class XRayClassifier(torch.nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 32, 3, padding=1)
        self.fc = torch.nn.Linear(32 * 16 * 16, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(x.flatten(1))


def make_loader(n_batches, batch_size, num_classes, device):
    gen = torch.Generator(device=device).manual_seed(0)
    images = torch.randn(n_batches, batch_size, 1, 32, 32, device=device, generator=gen)
    labels = torch.randint(0, num_classes, (n_batches, batch_size), device=device, generator=gen)
    return list(zip(images.unbind(0), labels.unbind(0)))


def train():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    num_classes, batch_size, epochs = 4, 512, 60
    train_loader = make_loader(40, batch_size, num_classes, device)
    model = XRayClassifier(num_classes).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = torch.nn.CrossEntropyLoss()

    for epoch in range(epochs):
        model.train()
        train_loss = torch.zeros((), device=device)
        train_acc = 0.0
        for inputs, labels in train_loader:
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()

            train_loss += loss.detach()
            train_acc += accuracy(outputs, labels)
        if epoch % 10 == 9:
            print(f"Epoch {epoch + 1}/{epochs}, Loss: {train_loss.item() / len(train_loader):.4f}, "
                  f"Accuracy: {train_acc / len(train_loader):.4f}")


if __name__ == "__main__":
    train()
