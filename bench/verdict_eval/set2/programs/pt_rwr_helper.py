"""Power-iteration solver for random walk with restart (RWR / personalized PageRank)
on a column-stochastic sparse matrix kept on the GPU. Helper module of pt_rwr.py.

Imitates: jinhongjung/pyrwr:utils/iterator.py (iterate_gpu: torch sparse CSR power
iteration that writes each iteration's residual into a device tensor and reads it back
with .item() for the progress text and the convergence test).
"""
import torch


def iterate_gpu(nAT, q, c=0.15, epsilon=1e-9, max_iters=200):
    """Returns the RWR score vector for restart vector q and the residual history."""
    residuals = torch.zeros(max_iters, device=q.device)
    x = q
    old_x = q
    log = []
    i = 0
    for i in range(max_iters):
        x = (1 - c) * torch.mv(nAT, old_x)
        s = torch.sum(x)
        x = x + (1 - s) * q                       # dead-end mass goes back to the seed
        residuals[i] = torch.norm(x - old_x, p=1)
        res = residuals[i].item()                 # device -> host every iteration
        log.append("residual at %d-iter: %e" % (i, res))
        if res <= epsilon:
            break
        old_x = x
    return x, residuals[:i + 1]
