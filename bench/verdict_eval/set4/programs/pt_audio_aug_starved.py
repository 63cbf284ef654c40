"""Training of a small CNN keyword classifier on log-mel spectrograms of one-second
utterances (an AudioMNIST-like ten-digit task with synthetic audio). The Dataset does
all the audio work per sample in NumPy in __getitem__: it "loads" the waveform, pads
it, applies a random time shift, computes an STFT and a mel spectrogram, and applies
SpecAugment-style time and frequency masks; the DataLoader runs in the main process.

Imitates: jarenadams21/ds4400-CaptchaDis:space/audioMNIST.py (AudioMNIST.__getitem__:
AudioHandler.open -> pad -> time_shift -> spectrogram -> spectral_augmentation, per
sample) with space/pre.py's AudioHandler, written here with NumPy instead of torchaudio.

Building one batch of 64 spectrograms is tens of milliseconds of host work, while the
training step on the GPU (forward, backward and Adam for a four-layer CNN) is one or
two milliseconds, so the GPU waits for the host almost all the time: gpu-starved.
"""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

SAMPLE_RATE = 16000
AUDIO_LEN = 16000
N_FFT = 512
HOP = 128
N_MELS = 64
N_CLASSES = 10
N_UTTERANCES = 1024
BATCH = 64
EPOCHS = 1
SHIFT_LIMIT = 0.2


def mel_filterbank(n_mels, n_fft, sr):
    def hz_to_mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)

    mels = np.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = np.floor((n_fft + 1) * hz / sr).astype(int)
    fb = np.zeros((n_mels, n_fft // 2 + 1), dtype=np.float32)
    for m in range(1, n_mels + 1):
        lo, mid, hi = bins[m - 1], bins[m], bins[m + 1]
        fb[m - 1, lo:mid] = (np.arange(lo, mid) - lo) / max(mid - lo, 1)
        fb[m - 1, mid:hi] = (hi - np.arange(mid, hi)) / max(hi - mid, 1)
    return fb


class SpokenDigits(Dataset):
    """Synthetic 'recordings': a digit-dependent harmonic stack with a formant sweep."""

    def __init__(self, n, seed=0):
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, N_CLASSES, n)
        self.lengths = rng.integers(7000, AUDIO_LEN, n)
        self.pitch = rng.uniform(90.0, 220.0, n)
        self.seeds = rng.integers(0, 2 ** 31, n)
        self.window = np.hanning(N_FFT).astype(np.float32)
        self.fb = mel_filterbank(N_MELS, N_FFT, SAMPLE_RATE)

    def __len__(self):
        return len(self.labels)

    def open(self, idx):
        rng = np.random.default_rng(self.seeds[idx])
        t = np.arange(self.lengths[idx], dtype=np.float32) / SAMPLE_RATE
        digit = self.labels[idx]
        f0 = self.pitch[idx] * (1.0 + 0.1 * np.sin(2 * np.pi * (1 + digit) * t))
        phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
        sig = sum(np.sin(h * phase) / h for h in range(1, 6))
        sig *= np.exp(-((t - t.mean()) / (0.25 + 0.03 * digit)) ** 2)
        return (sig + 0.05 * rng.standard_normal(len(t))).astype(np.float32)

    def __getitem__(self, idx):
        signal = self.open(idx)
        padded = np.zeros(AUDIO_LEN, dtype=np.float32)
        padded[AUDIO_LEN - len(signal):] = signal
        shift = int(np.random.random() * SHIFT_LIMIT * AUDIO_LEN)
        shifted = np.roll(padded, shift)
        frames = np.lib.stride_tricks.sliding_window_view(shifted, N_FFT)[::HOP] * self.window
        power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
        mel = np.log(self.fb @ power.T + 1e-6)
        for _ in range(2):                                   # frequency masks
            f = np.random.randint(0, 8)
            f0 = np.random.randint(0, N_MELS - f)
            mel[f0:f0 + f, :] = mel.mean()
        for _ in range(2):                                   # time masks
            w = np.random.randint(0, 12)
            t0 = np.random.randint(0, mel.shape[1] - w)
            mel[:, t0:t0 + w] = mel.mean()
        return torch.from_numpy(mel[None].astype(np.float32)), int(self.labels[idx])


def make_model():
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2))

    return nn.Sequential(block(1, 32), block(32, 64), block(64, 128), block(128, 128),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, N_CLASSES))


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    device = torch.device("cuda")
    loader = DataLoader(SpokenDigits(N_UTTERANCES), batch_size=BATCH, shuffle=True, num_workers=0)
    model = make_model().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    total = torch.zeros((), device=device)
    steps = 0
    for _ in range(EPOCHS):
        for specs, labels in loader:
            specs, labels = specs.to(device), labels.to(device)
            loss = loss_fn(model(specs), labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.detach()
            steps += 1
    print(f"steps {steps}, mean training loss {total.item() / steps:.4f}")


if __name__ == "__main__":
    main()
