"""GPU port of base.py with PyTorch: the lattice start and every random number (particle
index, displacement, uniform) come from the same seeded NumPy generator; positions,
displacements and uniforms are copied to the GPU once, and the Monte Carlo loop runs
there move by move: two particle-energy evaluations over the 500 particles, the
Metropolis test and a torch.where update, all on the device (no host synchronisation
inside the loop), about thirty small kernels per move for 15,000 moves. The positions
and the energy trace come back once at the end.

Imitates: wwilla7/lj-mmcmd:lj_mmcmd/mclj.py (Metropolis Monte Carlo of LJ particles),
numpy swapped for torch on cuda inside the move loop.
"""
import numpy as np
import torch

N = 500
DENSITY = 0.6
TEMP = 1.2
N_MOVES = 15_000
MAX_DISP = 0.25
CUTOFF2 = 2.5 ** 2
BOX = (N / DENSITY) ** (1.0 / 3.0)
DEV = torch.device("cuda")


def wrap(x):
    return x - BOX * torch.floor(x / BOX)


def particle_energy(pos, i, r):
    d = pos - r
    d -= BOX * torch.round(d / BOX)
    r2 = torch.sum(d * d, dim=1)
    r2[i] = float("inf")
    inv6 = torch.where(r2 < CUTOFF2, 1.0 / r2 ** 3, torch.zeros_like(r2))
    return torch.sum(4.0 * (inv6 * inv6 - inv6))


def total_energy(pos):
    return 0.5 * sum(particle_energy(pos, i, pos[i]) for i in range(N))


def main():
    rng = np.random.default_rng(123)
    side = int(np.ceil(N ** (1 / 3)))
    grid = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)[:N]
    pos = torch.from_numpy((grid + 0.5) * (BOX / side)).to(DEV)
    who = rng.integers(0, N, N_MOVES)
    disp = torch.from_numpy(rng.uniform(-MAX_DISP, MAX_DISP, (N_MOVES, 3))).to(DEV)
    u = torch.from_numpy(rng.random(N_MOVES)).to(DEV)
    energy = total_energy(pos)
    trace = torch.empty(N_MOVES // 500, dtype=torch.float64, device=DEV)
    accepted = torch.zeros((), dtype=torch.int64, device=DEV)
    for k in range(N_MOVES):
        i = int(who[k])
        trial = wrap(pos[i] + disp[k])
        d_e = particle_energy(pos, i, trial) - particle_energy(pos, i, pos[i])
        accept = u[k] < torch.exp(-d_e / TEMP)
        pos[i] = torch.where(accept, trial, pos[i])
        energy = energy + torch.where(accept, d_e, torch.zeros_like(d_e))
        accepted += accept
        if (k + 1) % 500 == 0:
            trace[(k + 1) // 500 - 1] = energy
    pos_h = pos.cpu().numpy()
    trace_h = np.concatenate([trace.cpu().numpy(), [accepted.item() / N_MOVES]])
    np.save("positions.npy", pos_h)
    np.save("energy_trace.npy", trace_h)
    print(f"final energy per particle {trace_h[-2] / N:.4f}, acceptance {trace_h[-1]:.3f}")


if __name__ == "__main__":
    main()
