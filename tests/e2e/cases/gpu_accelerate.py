# A trainer on Hugging Face Accelerate (GPU601): the accelerator's device is
# the GPU whatever it is called, and prepare() moves tensors there.
import torch  # expect: GPU501/-
from accelerate import Accelerator

accelerator = Accelerator()
target = accelerator.device
weights = accelerator.prepare(torch.ones(16))
host_weights = torch.ones(16)


def train(model, loader):
    for step, batch in enumerate(loader):
        batch = batch.to(target)
        loss = model(batch).mean()
        accelerator.backward(loss)
        print(f"loss {loss.item():.4f}")  # expect: GPU601
        print(f"norm {weights.norm().item():.4f}")  # expect: GPU601
        print(f"host {host_weights.norm().item():.4f}")  # a CPU tensor: fine
