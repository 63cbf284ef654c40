"""Pre-processing of a batch of 24 camera frames (480 x 640, BGR uint8 as OpenCV delivers
them) for a detector: BGR -> RGB, ImageNet normalisation, a three-level Gaussian
pyramid (5-tap binomial blur with reflected edges, then 2x decimation) and the mean
gradient magnitude of every level (NumPy baseline, float32).

Imitates: 1adrianb/face-alignment:face_alignment/detection/sfd/sfd_detector.py
(detect_from_image is handed `frame[..., ::-1]`, the BGR frame reversed to RGB, and
normalises it before building the detector's input; see face-alignment issue #259),
with the pyramid of a multi-scale detector front end.
Writes grad_means.npy (24 x 3, float32) and coarse0.npy (the coarsest level of frame 0,
3 x 120 x 160, float32).
"""
import numpy as np

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
        for c, gain in enumerate((0.8, 1.0, 1.2)):                 # B, G, R
            frames[k, :, :, c] = np.clip(gain * scene + rng.normal(0, 6, (H, W)), 0, 255)
    return frames


def blur_decimate(x):
    """x: (N, C, h, w) -> separable binomial blur with reflected edges, keep every 2nd."""
    p = np.pad(x, ((0, 0), (0, 0), (2, 2), (0, 0)), mode="reflect")
    x = sum(TAPS[i] * p[:, :, i:i + x.shape[2], :] for i in range(5))
    p = np.pad(x, ((0, 0), (0, 0), (0, 0), (2, 2)), mode="reflect")
    x = sum(TAPS[i] * p[:, :, :, i:i + x.shape[3]] for i in range(5))
    return x[:, :, ::2, ::2]


def grad_mean(x):
    gy = x[:, :, 1:, :-1] - x[:, :, :-1, :-1]
    gx = x[:, :, :-1, 1:] - x[:, :, :-1, :-1]
    return np.sqrt(gx * gx + gy * gy).mean(axis=(1, 2, 3))


def main():
    frames = synthetic_frames(np.random.default_rng(5))
    rgb = frames[..., ::-1]                                           # BGR -> RGB view
    x = ((rgb.astype(np.float32) / 255.0 - MEAN) / STD).transpose(0, 3, 1, 2)
    grads = np.empty((N_FRAMES, LEVELS), dtype=np.float32)
    for level in range(LEVELS):
        grads[:, level] = grad_mean(x)
        if level < LEVELS - 1:
            x = blur_decimate(x)
    np.save("grad_means.npy", grads)
    np.save("coarse0.npy", np.ascontiguousarray(x[0]))
    print("mean gradient per level", np.round(grads.mean(axis=0), 4))


if __name__ == "__main__":
    main()
