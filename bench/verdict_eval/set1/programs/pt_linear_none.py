"""A large dense linear transform applied in a loop to a resident CUDA tensor, with one
torch.cuda.synchronize() at the end: big GEMMs back to back, nothing wasted.

Imitates: kontainapp/km-demo:gpu-usage-samples/linear_transform/linear_transform_gpu.py
(a torch.nn.Linear applied loop_times times to one CUDA tensor, timed with a single
synchronize after the loop); scaled up so every call is an 8192^3 fp32 GEMM, and the
tensors are created on the device instead of copied there.
"""
import time

import torch
import torch.nn

in_row, in_f, out_f = 8192, 8192, 8192
loop_times = 60

s = time.time()
tensor = torch.randn(in_row, in_f, device="cuda")
l_trans = torch.nn.Linear(in_f, out_f, device="cuda")
for _ in range(loop_times):
    l_trans(tensor)
torch.cuda.synchronize()
elapsed = time.time() - s
print(f"CUDA take time: {elapsed:.3f} s, {2.0 * in_row * in_f * out_f * loop_times / elapsed / 1e12:.1f} TFLOP/s")
