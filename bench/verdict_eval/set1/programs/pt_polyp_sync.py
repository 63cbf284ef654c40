"""Per-repetition latency benchmark of a small segmentation network that drains the
device with torch.cuda.synchronize() after every forward pass.

Imitates: suyanzhou626/Polyp-Segmentation-ISBI2023:utils/eval_speed.py (warm-up, then
for each repetition: starter.record(); model(dummy_input); ender.record();
torch.cuda.synchronize(); elapsed_time() into a NumPy timings array).
"""
import numpy as np
import torch
import torch.nn.functional as F


class TinySegNet(torch.nn.Module):
    def __init__(self, ch=32):
        super().__init__()
        self.enc1 = torch.nn.Conv2d(3, ch, 3, padding=1)
        self.enc2 = torch.nn.Conv2d(ch, 2 * ch, 3, stride=2, padding=1)
        self.enc3 = torch.nn.Conv2d(2 * ch, 4 * ch, 3, stride=2, padding=1)
        self.head = torch.nn.Conv2d(4 * ch, 1, 1)

    def forward(self, x):
        x = F.relu(self.enc1(x))
        x = F.relu(self.enc2(x))
        x = F.relu(self.enc3(x))
        x = self.head(x)
        return F.interpolate(x, scale_factor=4, mode="bilinear", align_corners=False)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TinySegNet().to(device).eval()
    dummy_input = torch.randn(1, 3, 352, 352, dtype=torch.float, device=device)
    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    repetitions = 6000
    timings = np.zeros((repetitions, 1))

    with torch.no_grad():
        for _ in range(10):  # GPU warm-up
            _ = model(dummy_input)
        for rep in range(repetitions):
            starter.record()
            _ = model(dummy_input)
            ender.record()
            torch.cuda.synchronize()
            timings[rep] = starter.elapsed_time(ender)

    mean_ms = np.sum(timings) / repetitions
    print(f"mean {mean_ms:.3f} ms  std {np.std(timings):.3f} ms  fps {1000.0 / mean_ms:.1f}")


if __name__ == "__main__":
    main()
