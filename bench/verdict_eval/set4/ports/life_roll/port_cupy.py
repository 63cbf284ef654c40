"""GPU port of base.py with CuPy: the random initial board is drawn with the same seeded
NumPy generator and copied to the device once; the 240 generations (eight rolls, the
rule and a population count per generation) run there, the populations are kept in a
device array, and the final board and the populations come back once at the end.

Imitates: LeRouxDeBangkok/GameOfLife:life.py (np.roll neighbour sum), numpy swapped for
cupy.
"""
import cupy as cp
import numpy as np

SIZE = 2048
GENERATIONS = 240


def neighbors(a):
    return (cp.roll(a, 1, 0) + cp.roll(a, -1, 0) + cp.roll(a, 1, 1) + cp.roll(a, -1, 1)
            + cp.roll(cp.roll(a, 1, 0), 1, 1) + cp.roll(cp.roll(a, 1, 0), -1, 1)
            + cp.roll(cp.roll(a, -1, 0), 1, 1) + cp.roll(cp.roll(a, -1, 0), -1, 1))


def step(a):
    n = neighbors(a)
    survive = (a == 1) & ((n == 2) | (n == 3))
    born = (a == 0) & (n == 3)
    return (survive | born).astype(cp.uint8)


def main():
    rng = np.random.default_rng(2024)
    board = cp.asarray((rng.random((SIZE, SIZE)) < 0.3).astype(np.uint8))
    population = cp.empty(GENERATIONS, dtype=cp.int64)
    for g in range(GENERATIONS):
        board = step(board)
        population[g] = board.sum(dtype=cp.int64)
    board_h, population_h = cp.asnumpy(board), cp.asnumpy(population)
    np.save("board.npy", board_h)
    np.save("population.npy", population_h)
    print(f"generations {GENERATIONS}, final population {population_h[-1]}")


if __name__ == "__main__":
    main()
