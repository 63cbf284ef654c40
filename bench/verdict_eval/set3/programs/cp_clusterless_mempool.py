"""Clusterless decoding of hippocampal replay: for every tetrode, the likelihood of the
animal's position given the waveform marks of each decoded spike, from a kernel density
over the encoding spikes' marks and positions, a block of decoding spikes at a time.

Imitates: Eden-Kramer-Lab/replay_identification:replay_identification/likelihoods/
multiunit_likelihood_integer_gpu.py (estimate_log_joint_mark_intensity: a
(decoding x encoding) mark-distance matrix built from an integer Gaussian lookup per mark
feature, times the position-distance matrix; and the loop in
estimate_non_local_multiunit_likelihood that calls
cp.get_default_memory_pool().free_all_blocks() to hand memory back), here emptying the
pool after every block of decoding spikes.

Emptying the pool throws away the cached blocks, so every block's temporaries (tens of MB
each) are cudaMalloc'ed again and cudaFree'd again, and each cudaFree waits for the
device: allocation churn, not arithmetic, sets the pace.
"""
import math

import cupy as cp
import numpy as np

N_ELECTRODES = 64
N_ENCODING = 16000         # encoding spikes per tetrode
N_DECODING = 10000         # decoding spikes per tetrode
N_MARKS = 4                # waveform features (peak amplitudes per channel)
N_TIME = 200_000
N_BINS = 100
BLOCK = 1000
MARK_STD = 20.0
POSITION_STD = 6.0
MAX_MARK = 6000
SQRT_2PI = math.sqrt(2.0 * math.pi)


@cp.fuse
def gaussian_pdf(x, mean, sigma):
    return cp.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI)


def estimate_position_distance(place_bin_centers, positions, position_std):
    """(n_spikes, n_bins) Gaussian kernel between spike positions and bin centres."""
    return gaussian_pdf(place_bin_centers[None, :], positions[:, None], position_std).astype(cp.float32)


def normal_pdf_integer_lookup(x, mean, std=MARK_STD, max_value=MAX_MARK):
    normal_density = gaussian_pdf(cp.arange(-max_value, max_value), 0, std).astype(cp.float32)
    return normal_density[(x - mean) + max_value]


def estimate_log_joint_mark_intensity(decoding_marks, encoding_marks, occupancy, mean_rate,
                                      position_distance, sample_weights):
    n_decoding = decoding_marks.shape[0]
    n_encoding = encoding_marks.shape[0]
    denominator = cp.sum(sample_weights)
    mark_distance = cp.ones((n_decoding, n_encoding), dtype=cp.float32) * sample_weights[None, :]
    for m in range(N_MARKS):
        mark_distance *= normal_pdf_integer_lookup(
            cp.expand_dims(decoding_marks[:, m], axis=1), cp.expand_dims(encoding_marks[:, m], axis=0))
    density = mark_distance @ position_distance / denominator
    return math.log(mean_rate) + cp.log(density + 1e-30) - cp.log(occupancy)


def main():
    mempool = cp.get_default_memory_pool()
    rs = cp.random.RandomState(42)
    place_bin_centers = cp.linspace(0.0, 200.0, N_BINS, dtype=cp.float32)
    occupancy = cp.full(N_BINS, 1.0 / N_BINS, dtype=cp.float32) + 1e-3 * cp.sin(place_bin_centers / 30.0) ** 2
    log_likelihood = cp.zeros((N_TIME, N_BINS), dtype=cp.float32)

    electrodes = []
    for _ in range(N_ELECTRODES):
        electrodes.append(dict(
            enc_marks=rs.randint(40, 400, size=(N_ENCODING, N_MARKS)).astype(cp.int16),
            enc_pos=rs.uniform(0.0, 200.0, size=N_ENCODING).astype(cp.float32),
            enc_weights=rs.uniform(0.5, 1.0, size=N_ENCODING).astype(cp.float32),
            dec_marks=rs.randint(40, 400, size=(N_DECODING, N_MARKS)).astype(cp.int16),
            dec_times=rs.permutation(N_TIME)[:N_DECODING],
            mean_rate=float(np.random.default_rng(len(electrodes)).uniform(0.01, 0.05)),
        ))

    for e in electrodes:
        position_distance = estimate_position_distance(place_bin_centers, e["enc_pos"], POSITION_STD)
        for start in range(0, N_DECODING, BLOCK):
            block = slice(start, start + BLOCK)
            log_jmi = estimate_log_joint_mark_intensity(
                e["dec_marks"][block], e["enc_marks"], occupancy, e["mean_rate"],
                position_distance, e["enc_weights"])
            log_likelihood[e["dec_times"][block]] += log_jmi
            mempool.free_all_blocks()

    best_bin = cp.argmax(log_likelihood.sum(axis=0))
    print("tetrodes", N_ELECTRODES, "blocks", N_ELECTRODES * (N_DECODING // BLOCK),
          "most likely bin", int(best_bin))


if __name__ == "__main__":
    main()
