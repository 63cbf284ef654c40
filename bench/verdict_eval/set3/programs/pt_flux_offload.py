"""Low-memory inference of a deep MLP-mixer-style token model whose blocks live in pinned
CPU memory: a forward pre-hook moves each block's parameters to the GPU just before the
block runs and a forward hook drops them again, so only one block is resident at a time.

Imitates: gau-nernst/rectified-flow:offload.py (PerLayerOffload: every parameter is
copied to pinned memory with p.data.cpu().pin_memory(); a forward pre-hook on each layer
of the repeated nn.Sequential does p.data = p.data.cuda(non_blocking=True) and a forward
hook points p.data back at the pinned copy).

The copies are pinned and asynchronous, so the host never waits; but each forward pass
streams all 1.2 GB of weights over PCIe to compute on 64 tokens, so host-to-device copies
are almost all of the GPU's busy time (about 25 ms of copies per pass against under a
millisecond of matrix products): transfer-bound.
"""
import torch
from torch import nn

D_MODEL = 1536
D_HIDDEN = 6144
N_BLOCKS = 16
TOKENS = 64
N_PASSES = 40


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D_MODEL)
        self.fc1 = nn.Linear(D_MODEL, D_HIDDEN)
        self.fc2 = nn.Linear(D_HIDDEN, D_MODEL)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))


class PerLayerOffload:
    def __init__(self, model):
        for p in model.parameters():
            p.data = p.data.cpu().pin_memory()
        self.param_dict = {p: p.data for p in model.parameters()}
        self.manual_params = []

        def pre_hook(module, args):
            for p in module.parameters():
                p.data = p.data.cuda(non_blocking=True)

        def post_hook(module, args, output):
            for p in module.parameters():
                p.data = self.param_dict[p]

        def traverse(module):
            if isinstance(module, nn.Sequential) and len(module) > 1 and all(type(m) is type(module[0]) for m in module):
                for child in module:
                    child.register_forward_pre_hook(pre_hook)
                    child.register_forward_hook(post_hook)
            else:
                self.manual_params.extend(module.parameters(recurse=False))
                for child in module.children():
                    traverse(child)

        traverse(model)

    def cuda(self):
        for p in self.manual_params:
            p.data = p.data.cuda(non_blocking=True)
        return self


class TokenModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(256, D_MODEL)
        self.blocks = nn.Sequential(*[Block() for _ in range(N_BLOCKS)])
        self.head = nn.Linear(D_MODEL, 256)

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)))


def build_model(seed=0, rank=32):
    """Low-rank random weights (stands in for loading a checkpoint; cheap on the CPU)."""
    with torch.device("meta"):
        model = TokenModel()
    model = model.to_empty(device="cpu")
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2:
                a = torch.randn(p.shape[0], rank, generator=g)
                b = torch.randn(rank, p.shape[1], generator=g)
                p.copy_(a @ b / (rank * p.shape[1]) ** 0.5)
            elif name.endswith("weight"):
                p.fill_(1.0)
            else:
                p.zero_()
    return model.eval()


def main():
    torch.manual_seed(0)
    model = build_model()
    PerLayerOffload(model).cuda()
    x = torch.randn(TOKENS, 256, device="cuda")
    out_sum = torch.zeros((), device="cuda")
    with torch.no_grad():
        for _ in range(N_PASSES):
            y = model(x)
            out_sum += y.float().pow(2).mean()
            x = torch.tanh(y)
    print("passes", N_PASSES, "resident-weight GB per pass %.2f" % (N_BLOCKS * 2 * D_MODEL * D_HIDDEN * 4 / 1e9),
          "output energy %.5f" % out_sum.item())


if __name__ == "__main__":
    main()
