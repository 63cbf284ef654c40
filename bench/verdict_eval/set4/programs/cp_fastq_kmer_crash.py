"""k-mer spectrum of a sequencing run: FASTQ records are parsed, validated and
quality-trimmed in Python on the host, one chunk of reads at a time, and each chunk's
bases are moved to the GPU where every 11-mer is 2-bit encoded and counted into a
4^11-bin histogram that stays on the device. A read in the seventh chunk is corrupt (a
quality string shorter than its sequence); the parser raises and the run exits with
status 1.

Imitates: jorgenwh/bionumpy:main.py (`for chunk in parser.get_chunks(): chunk.to_cuda();
sequences = chunk.get_sequences(); kmers = hasher.get_kmer_hashes(sequences)`: chunks
parsed on the host, k-mers hashed on the GPU), with the record-by-record parsing and
trimming of a plain Python FASTQ reader.

Parsing a chunk of 20,000 reads is a Python loop with a dozen small NumPy calls per
read, a couple of hundred milliseconds on the host, while the GPU's share of the chunk
(a 3 MB copy and a few k-mer kernels) is well under a millisecond, so the GPU sits idle
waiting for the parser: gpu-starved (and exit status 1).
"""
import cupy as cp
import numpy as np

K = 11
READ_LEN = 150
CHUNK = 20_000
N_CHUNKS = 8
BAD_READ = 6 * CHUNK + 12_345          # in the seventh chunk
MIN_QUAL = 20
BASE_LUT = bytes.maketrans(b"ACGTN", bytes([0, 1, 2, 3, 4]))


def synthetic_fastq(n_reads, seed=0):
    """A FASTQ file image built with NumPy: a random genome, reads sampled from it with
    a few sequencing errors and N calls, and qualities that decay along the read."""
    rng = np.random.default_rng(seed)
    genome = rng.integers(0, 4, 2_000_000, dtype=np.uint8)
    starts = rng.integers(0, len(genome) - READ_LEN, n_reads)
    reads = genome[starts[:, None] + np.arange(READ_LEN)]
    u = rng.random(reads.shape, dtype=np.float32)
    errors = u < 0.004
    reads[errors] = rng.integers(0, 4, errors.sum(), dtype=np.uint8)
    reads[u < 0.0005] = 4                                   # N calls
    decay = (38 - np.arange(READ_LEN) // 6).astype(np.int16)
    qual = np.clip(decay + rng.integers(-5, 6, reads.shape, dtype=np.int8), 2, 40).astype(np.uint8)
    header = np.frombuffer(b"".join(b"@r%09d\n" % i for i in range(n_reads)), np.uint8).reshape(n_reads, -1)
    nl = np.full((n_reads, 1), ord("\n"), np.uint8)
    plus = np.tile(np.frombuffer(b"+\n", np.uint8), (n_reads, 1))
    record = np.hstack([header, np.frombuffer(b"ACGTN", np.uint8)[reads], nl, plus, qual + 33, nl])
    text = record.tobytes()
    # truncate the quality line of one record (a corrupt write)
    bad = text.index(b"@r%09d\n" % BAD_READ)
    q_end = text.index(b"\n", text.index(b"+\n", bad) + 2)
    return text[:q_end - 40] + text[q_end:]


def parse_chunk(lines, first, n):
    """Validate and quality-trim n records starting at record `first`."""
    seqs, lengths = [], []
    for r in range(first, first + n):
        head, seq, plus, qual = lines[4 * r:4 * r + 4]
        if not head.startswith(b"@") or not plus.startswith(b"+"):
            raise ValueError(f"record {r}: malformed FASTQ record")
        if len(seq) != len(qual):
            raise ValueError(f"record {r} ({head.decode()}): sequence length {len(seq)} != quality length {len(qual)}")
        codes = np.frombuffer(seq.translate(BASE_LUT), dtype=np.uint8)
        q = np.frombuffer(qual, dtype=np.uint8) - 33
        good = np.flatnonzero(q >= MIN_QUAL)
        end = int(good[-1]) + 1 if good.size else 0
        seqs.append(codes[:end])
        lengths.append(end)
    return np.concatenate(seqs), np.asarray(lengths)


def count_kmers(bases_h, lengths_h, counts):
    bases = cp.asarray(bases_h)
    ends = cp.cumsum(cp.asarray(lengths_h))
    read_of = cp.searchsorted(ends, cp.arange(bases.size), side="right")
    n_pos = bases.size - K + 1
    code = cp.zeros(n_pos, dtype=cp.int64)
    bad = cp.zeros(n_pos, dtype=cp.int32)
    for j in range(K):
        b = bases[j:j + n_pos]
        code = (code << 2) | cp.minimum(b, 3).astype(cp.int64)
        bad += (b > 3)
    valid = (bad == 0) & (read_of[:n_pos] == read_of[K - 1:])
    counts += cp.bincount(code[valid], minlength=4 ** K)


def main():
    lines = synthetic_fastq(N_CHUNKS * CHUNK).split(b"\n")
    counts = cp.zeros(4 ** K, dtype=cp.int64)
    for c in range(N_CHUNKS):
        bases, lengths = parse_chunk(lines, c * CHUNK, CHUNK)
        count_kmers(bases, lengths, counts)
        print(f"chunk {c}: {len(lengths)} reads, {int(lengths.sum())} bases kept", flush=True)
    distinct = int(cp.count_nonzero(counts))
    print(f"{N_CHUNKS * CHUNK} reads, distinct {K}-mers {distinct}")


if __name__ == "__main__":
    main()
