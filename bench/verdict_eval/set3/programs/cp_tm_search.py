"""Template matching of a subtomogram reference against a cryo-ET tomogram: for every
rotation of an angular search, rotate the reference, normalise it under a spherical mask,
cross-correlate it with the whole tomogram in Fourier space and keep the best score and
angle per voxel.

Imitates: SBC-Utrecht/pytom-match-pick:src/pytom_tm/matching.py (TemplateMatchingGPU.run:
the tomogram's conjugated FFT and the local standard deviation under the mask are
computed once; then per rotation the template is rotated, normalised under the mask,
pasted into a padded volume, irfftn(volume_rft_conj * rfftn(template_padded)) / std_volume
is formed, an elementwise kernel updates the score and angle maps, and the running
variance stays on the device), with a small RawKernel in place of voltools' rotation.

Each rotation is a few FFTs and elementwise passes over a 384 x 384 x 256 volume, about a
millisecond of GPU work against a few hundred microseconds of launches, and nothing comes
back to the host until the search is over. Compute-bound: nothing worth fixing.
"""
import cupy as cp
import numpy as np
from cupyx.scipy.fft import irfftn, rfftn

VOL_SHAPE = (384, 384, 256)
TSIZE = 32                 # template box
MASK_RADIUS = 13.0
N_ANGLES = 1500
N_PARTICLES = 24

rotate_trilinear = cp.RawKernel(r'''
extern "C" __global__
void rotate_trilinear(const float* src, float* dst, int n,
                      float r00, float r01, float r02,
                      float r10, float r11, float r12,
                      float r20, float r21, float r22) {
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx >= n * n * n) return;
    int x = idx / (n * n), y = (idx / n) % n, z = idx % n;
    float c = 0.5f * (n - 1);
    float dx = x - c, dy = y - c, dz = z - c;
    float sx = r00 * dx + r10 * dy + r20 * dz + c;   /* R^T maps output to source */
    float sy = r01 * dx + r11 * dy + r21 * dz + c;
    float sz = r02 * dx + r12 * dy + r22 * dz + c;
    int x0 = (int)floorf(sx), y0 = (int)floorf(sy), z0 = (int)floorf(sz);
    float fx = sx - x0, fy = sy - y0, fz = sz - z0;
    float acc = 0.0f;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            for (int k = 0; k < 2; ++k) {
                int xi = x0 + i, yj = y0 + j, zk = z0 + k;
                if (xi < 0 || yj < 0 || zk < 0 || xi >= n || yj >= n || zk >= n) continue;
                float w = (i ? fx : 1.0f - fx) * (j ? fy : 1.0f - fy) * (k ? fz : 1.0f - fz);
                acc += w * src[(xi * n + yj) * n + zk];
            }
    dst[idx] = acc;
}
''', 'rotate_trilinear')

update_results = cp.ElementwiseKernel(
    'float32 ccc, int32 angle_id', 'float32 score, int32 angle',
    'if (ccc > score) { score = ccc; angle = angle_id; }', 'update_results')

square_sum = cp.ReductionKernel(
    'float32 x', 'float64 y', '(double)x * (double)x', 'a + b', 'y = a', '0', 'square_sum')


def random_rotations(n, seed):
    """Uniform random rotation matrices from unit quaternions (w, x, y, z)."""
    q = np.random.default_rng(seed).standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    rot = np.stack([
        1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
        2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
        2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=1)
    return rot.astype(np.float32)


def rotate(src, dst, rot):
    n = src.shape[0]
    rotate_trilinear(((n ** 3 + 255) // 256,), (256,),
                     (src, dst, np.int32(n), *[np.float32(v) for v in rot]))
    return dst


def make_reference():
    """An asymmetric 'particle': an ellipsoidal body with a knob on one side."""
    g = np.arange(TSIZE, dtype=np.float32) - (TSIZE - 1) / 2
    x, y, z = np.meshgrid(g, g, g, indexing="ij")
    body = np.exp(-((x / 9.0) ** 2 + (y / 6.0) ** 2 + (z / 4.5) ** 2))
    knob = 0.8 * np.exp(-(((x - 7.0) / 2.5) ** 2 + ((y - 4.0) / 2.5) ** 2 + (z / 2.5) ** 2))
    return (body + knob).astype(np.float32)


def std_under_mask_convolution(vol_rft_conj, vol_sq_rft_conj, mask_padded, mask_weight):
    mask_rft = rfftn(mask_padded)
    mean = irfftn(vol_rft_conj * mask_rft, s=mask_padded.shape) / mask_weight
    mean_sq = irfftn(vol_sq_rft_conj * mask_rft, s=mask_padded.shape) / mask_weight
    return cp.sqrt(cp.maximum(mean_sq - mean * mean, 1e-6))


def main():
    reference = cp.asarray(make_reference())
    rot_buf = cp.empty_like(reference)

    # Synthetic tomogram: noise plus randomly oriented copies of the particle.
    rs = cp.random.RandomState(7)
    volume = rs.standard_normal(VOL_SHAPE, dtype=cp.float32)
    place = np.random.default_rng(3)
    for r in random_rotations(N_PARTICLES, seed=11):
        x, y, z = (int(place.integers(0, s - TSIZE)) for s in VOL_SHAPE)
        volume[x:x + TSIZE, y:y + TSIZE, z:z + TSIZE] += 1.5 * rotate(reference, rot_buf, r)

    # Precomputed once: conjugated spectra of the tomogram and the local std under the mask.
    vol_rft_conj = rfftn(volume).conj()
    vol_sq_rft_conj = rfftn(volume * volume).conj()
    g = cp.arange(TSIZE, dtype=cp.float32) - (TSIZE - 1) / 2
    mask = ((g[:, None, None] ** 2 + g[None, :, None] ** 2 + g[None, None, :] ** 2)
            <= MASK_RADIUS ** 2).astype(cp.float32)
    mask_weight = mask.sum()
    c = [s // 2 for s in VOL_SHAPE]
    pad_index = tuple(slice(ci - TSIZE // 2, ci + TSIZE // 2) for ci in c)
    mask_padded = cp.zeros(VOL_SHAPE, dtype=cp.float32)
    mask_padded[pad_index] = mask
    std_volume = std_under_mask_convolution(vol_rft_conj, vol_sq_rft_conj, mask_padded, mask_weight) * mask_weight
    del vol_sq_rft_conj, mask_padded

    template_padded = cp.zeros(VOL_SHAPE, dtype=cp.float32)
    scores = cp.full(VOL_SHAPE, -1000.0, dtype=cp.float32)
    angles = cp.full(VOL_SHAPE, -1, dtype=cp.int32)
    variance = cp.zeros((), dtype=cp.float64)
    n_vox = float(np.prod(VOL_SHAPE))
    rotations = random_rotations(N_ANGLES, seed=2024)

    for angle_id in range(N_ANGLES):
        template = rotate(reference, rot_buf, rotations[angle_id])
        mean = (template * mask).sum() / mask_weight
        std = cp.sqrt(((template - mean) ** 2 * mask).sum() / mask_weight)
        template_padded[pad_index] = ((template - mean) / std) * mask
        ccc = irfftn(vol_rft_conj * rfftn(template_padded), s=VOL_SHAPE) / std_volume
        update_results(ccc, np.int32(angle_id), scores, angles)
        variance += square_sum(ccc) / n_vox

    # Undo the conjugation (flip) and the FFT shift, as the original does, then report.
    shift = tuple(s // 2 + 1 for s in VOL_SHAPE)
    scores = cp.roll(cp.flip(scores), shift, axis=(0, 1, 2))
    angles = cp.roll(cp.flip(angles), shift, axis=(0, 1, 2))
    best = int(scores.argmax())
    print("angles searched", N_ANGLES,
          "best score %.3f" % float(scores.ravel()[best]),
          "at", np.unravel_index(best, VOL_SHAPE), "angle", int(angles.ravel()[best]),
          "score std %.4f" % float(cp.sqrt(variance / N_ANGLES)))


if __name__ == "__main__":
    main()
