"""GPU port of base.py with PyTorch: the frames are made on the host as before, the BGR ->
RGB flip is kept as the same NumPy view (frames[..., ::-1]) and handed to
torch.from_numpy to move it to the GPU, where normalisation, the blur (a depthwise
conv2d with reflect padding) and the gradients would run.

torch.from_numpy does not accept arrays with negative strides, which is what the
[..., ::-1] view is: the port raises ValueError ("At least one stride in the given
numpy array is negative") before any GPU work and exits with status 1 (the fix is
.copy() / np.ascontiguousarray before from_numpy, or torch.flip after it).

Imitates: 1adrianb/face-alignment:face_alignment/detection/sfd/sfd_detector.py (a
frame[..., ::-1] view passed on to torch.from_numpy; face-alignment issue #259 and
pytorch/pytorch issue #92680 show the same ValueError).
"""
import numpy as np
import torch
import torch.nn.functional as F

N_FRAMES = 24
H, W = 480, 640
LEVELS = 3
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
TAPS = np.array([1, 4, 6, 4, 1], dtype=np.float32) / 16.0


def synthetic_frames(rng):
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    frames = np.empty((N_FRAMES, H, W, 3), dtype=np.uint8)
    for k in range(N_FRAMES):
        scene = 120 + 80 * np.sin(xx / (20.0 + k)) * np.cos(yy / 31.0)
        for c, gain in enumerate((0.8, 1.0, 1.2)):
            frames[k, :, :, c] = np.clip(gain * scene + rng.normal(0, 6, (H, W)), 0, 255)
    return frames


def blur_decimate(x, taps):
    c = x.shape[1]
    kv = taps.view(1, 1, 5, 1).repeat(c, 1, 1, 1)
    kh = taps.view(1, 1, 1, 5).repeat(c, 1, 1, 1)
    x = F.conv2d(F.pad(x, (0, 0, 2, 2), mode="reflect"), kv, groups=c)
    x = F.conv2d(F.pad(x, (2, 2, 0, 0), mode="reflect"), kh, groups=c)
    return x[:, :, ::2, ::2]


def grad_mean(x):
    gy = x[:, :, 1:, :-1] - x[:, :, :-1, :-1]
    gx = x[:, :, :-1, 1:] - x[:, :, :-1, :-1]
    return torch.sqrt(gx * gx + gy * gy).mean(dim=(1, 2, 3))


def main():
    device = torch.device("cuda")
    frames = synthetic_frames(np.random.default_rng(5))
    rgb = torch.from_numpy(frames[..., ::-1]).to(device)
    mean = torch.from_numpy(MEAN).to(device)
    std = torch.from_numpy(STD).to(device)
    x = ((rgb.float() / 255.0 - mean) / std).permute(0, 3, 1, 2).contiguous()
    taps = torch.from_numpy(TAPS).to(device)
    grads = torch.empty((N_FRAMES, LEVELS), device=device)
    for level in range(LEVELS):
        grads[:, level] = grad_mean(x)
        if level < LEVELS - 1:
            x = blur_decimate(x, taps)
    np.save("grad_means.npy", grads.cpu().numpy())
    np.save("coarse0.npy", x[0].cpu().numpy())
    print("mean gradient per level", np.round(grads.mean(dim=0).cpu().numpy(), 4))


if __name__ == "__main__":
    main()
