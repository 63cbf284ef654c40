# Retry loops (`while retries:`, `while batch_size:` halving on OOM around a
# try of one whole run) and loops over a short hand-written list bound to a
# name (runners = (Inference, Train)) run a few costly times: cold. A
# countdown over steps, or a list that grows, stays hot.
import torch  # expect: GPU501/-

w = torch.ones(8, device="cuda")


def validate(model, x):
    return model(x.cuda()).sum().item()  # once per try: fine


def try_run(model, x, batch_size):
    while batch_size:
        try:
            return validate(model, x)
        except RuntimeError:
            pass
        batch_size = batch_size // 2


def profile(model, x):
    retries = 2
    while retries:
        retries -= 1
        try:
            print(model(x.cuda()).sum().item())  # fine
        except RuntimeError:
            pass


def steps(model, x, n):
    while n:
        n -= 1
        try:
            print((w * x).sum().item())  # expect: GPU601
        except RuntimeError:
            pass


def sweep(x):
    runners = (torch.sin, torch.cos)
    for op in runners:
        print((w * op(x)).sum().item())  # fine
    grown = [torch.sin]
    for b in range(10):
        grown.append(torch.cos)
    for fn in grown:
        print((w * fn(x)).sum().item())  # expect: GPU601
