"""A program that runs torch.profiler itself: under gpuopt trace only one CUPTI
subscriber can exist; this shows what each side then reports."""
import torch
from torch.profiler import ProfilerActivity, profile
from gpucheck import report

x = torch.ones(1024, device="cuda")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(100):
        x.add_(1.0)
    torch.cuda.synchronize()
events = [e for e in prof.key_averages() if e.device_type.name == "CUDA"]
report(profiler_cuda_events=len(events))
