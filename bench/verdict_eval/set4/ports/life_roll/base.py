"""Conway's Game of Life on a 2048 x 2048 toroidal board for 240 generations, the eight
neighbour counts formed with np.roll (NumPy baseline).

Imitates: LeRouxDeBangkok/GameOfLife:life.py (neighbors: the sum of eight np.roll'ed
copies of the uint8 board; step: survive = (a == 1) & ((n == 2) | (n == 3)),
born = (a == 0) & (n == 3)), run without the animation.
Writes board.npy (uint8, 2048 x 2048, the final board) and population.npy (int64, the
number of live cells after each generation).
"""
import numpy as np

SIZE = 2048
GENERATIONS = 240


def neighbors(a):
    return (np.roll(a, 1, 0) + np.roll(a, -1, 0) + np.roll(a, 1, 1) + np.roll(a, -1, 1)
            + np.roll(np.roll(a, 1, 0), 1, 1) + np.roll(np.roll(a, 1, 0), -1, 1)
            + np.roll(np.roll(a, -1, 0), 1, 1) + np.roll(np.roll(a, -1, 0), -1, 1))


def step(a):
    n = neighbors(a)
    survive = (a == 1) & ((n == 2) | (n == 3))
    born = (a == 0) & (n == 3)
    return (survive | born).astype(np.uint8)


def main():
    rng = np.random.default_rng(2024)
    board = (rng.random((SIZE, SIZE)) < 0.3).astype(np.uint8)
    population = np.empty(GENERATIONS, dtype=np.int64)
    for g in range(GENERATIONS):
        board = step(board)
        population[g] = int(board.sum())
    np.save("board.npy", board)
    np.save("population.npy", population)
    print(f"generations {GENERATIONS}, final population {population[-1]}")


if __name__ == "__main__":
    main()
