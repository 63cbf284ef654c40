# CPU functions given device arrays (GPU604) and the PyTorch forms of the rules.
import numpy as np
import scipy.ndimage
import cupy as cp
import torch  # expect: GPU501/-

x = cp.arange(10.0)
m = np.median(x)  # NumPy dispatches it to cupy.median (__array_function__): stays on the GPU, fine
s = scipy.ndimage.gaussian_filter(x, 2)  # expect: GPU604
ok = np.median(np.arange(10.0))  # expect: GPU101/cupy GPU101/cupy

model_input = torch.zeros(8, 4, device="cuda")
weights = np.ones((4, 4), dtype=np.float32)  # expect: GPU101/cupy
losses = []
for step in range(5):
    w = torch.tensor(weights, device="cuda")  # expect: GPU602
    out = model_input @ w
    loss = out.sum()
    losses.append(loss.item())  # expect: GPU601
    arr = out.cpu().numpy()  # expect: GPU601
    host = torch.zeros(3)  # a CPU tensor: fine
    value = host.sum().item()  # CPU tensor: fine
torch.cuda.synchronize()
final = loss.item()  # after the loop: fine

state = cp.zeros(16)
for step in range(10):
    host_state = cp.asnumpy(state)  # expect: GPU601
    host_state[0] += 1.0
    state = cp.asarray(host_state)  # expect: GPU604
