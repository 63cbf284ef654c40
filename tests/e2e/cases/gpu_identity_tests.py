# An identity test (`is None`, `is not None`) of a device tensor
# never synchronizes; a truth test of it does.
import torch  # expect: GPU501/-

scale = torch.ones(1, device="cuda")


def train(model, loader, use_scale):
    for batch in loader:
        loss = model(batch.cuda()).mean()
        dist_scale = scale if use_scale else None
        if dist_scale is not None:  # an identity test: fine
            loss = loss * dist_scale
        if dist_scale is None:  # fine
            continue
        if loss:  # expect: GPU601
            pass
