"""Cell counting on a synthetic microscopy image with scikit-image.

Smooths, edge-detects and thresholds a noisy image of touching discs, cleans
the mask (binary_opening), labels objects, then splits touching cells with a watershed.
GPU port: cuCIM (`from cucim.skimage import filters, measure, morphology` on
CuPy arrays); segmentation.watershed is not in cuCIM and stays on the CPU.
"""
import numpy as np
from scipy import ndimage as ndi
from skimage import filters, measure, morphology
from skimage.feature import peak_local_max
from skimage.segmentation import watershed


def synthetic_cells(shape=(384, 384), n_cells=40, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    image = np.zeros(shape)
    for _ in range(n_cells):
        cy, cx = rng.uniform(20, shape[0] - 20, size=2)
        r = rng.uniform(8, 16)
        image[(yy - cy) ** 2 + (xx - cx) ** 2 < r ** 2] = 1.0
    image += 0.35 * rng.standard_normal(shape)
    return image


def main():
    image = synthetic_cells()

    smooth = filters.gaussian(image, sigma=2.0)
    edges = filters.sobel(smooth)
    level = filters.threshold_otsu(smooth)
    mask = smooth > level
    mask = morphology.binary_opening(mask, morphology.disk(3))

    labels = measure.label(mask)
    props = measure.regionprops(labels)
    areas = np.array([p.area for p in props if p.area >= 50])

    # split touching cells: distance transform peaks as watershed markers
    distance = ndi.distance_transform_edt(mask)
    peaks = peak_local_max(distance, min_distance=7, labels=labels)
    markers = np.zeros_like(labels)
    markers[tuple(peaks.T)] = np.arange(1, len(peaks) + 1)
    split = watershed(-distance, markers, mask=mask)

    print(f"image {image.shape}, otsu threshold {level:.3f}, mean edge {edges.mean():.4f}")
    print(f"foreground fraction {mask.mean():.3f}")
    print(f"connected objects: {labels.max()} ({areas.size} of 50+ px, median area {np.median(areas):.0f} px)")
    print(f"after watershed split: {split.max()} cells")


if __name__ == "__main__":
    main()
