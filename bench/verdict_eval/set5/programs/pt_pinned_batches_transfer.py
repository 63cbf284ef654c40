"""Linear-probe training fed from a pinned host dataset, one large batch copy per step.

Imitates nikolaosdionelis/MachineLearningML:residualflows/GPU94.py (a DataLoader with
pin_memory=True whose batches go to the GPU with .to('cuda', non_blocking=True) before a
small model's step): here the image set is held in page-locked host memory and each
step copies a 256-image uint8 batch (38.5 MB) to the GPU for a model that does a few
hundred microseconds of work on it. New code; the images are synthetic.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
dev = torch.device("cuda")

N_IMAGES = 4096
BATCH = 256
EPOCHS = 60
H = W = 224

# synthetic uint8 images, made on the GPU once and parked in pinned host memory
images = torch.empty((N_IMAGES, 3, H, W), dtype=torch.uint8).pin_memory()
images.copy_(torch.randint(0, 256, (N_IMAGES, 3, H, W), dtype=torch.uint8, device=dev))
labels = torch.randint(0, 10, (N_IMAGES,)).pin_memory()

model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 14 * 14, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
mean = torch.tensor([0.485, 0.456, 0.406], device=dev).view(1, 3, 1, 1) * 255
std = torch.tensor([0.229, 0.224, 0.225], device=dev).view(1, 3, 1, 1) * 255


def main():
    loss_sum = torch.zeros((), device=dev)
    for epoch in range(EPOCHS):
        for start in range(0, N_IMAGES, BATCH):
            x = images[start:start + BATCH].to(dev, non_blocking=True)
            y = labels[start:start + BATCH].to(dev, non_blocking=True)
            x = (x.float() - mean) / std
            x = F.avg_pool2d(x, 16)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss_sum += loss.detach()
    print("mean loss", float(loss_sum) / (EPOCHS * N_IMAGES // BATCH))


if __name__ == "__main__":
    main()
