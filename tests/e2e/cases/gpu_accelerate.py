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


# prepare() of objects the model does not know (a model, an optimizer and
# loaders passed in): the loaders yield device batches, the model runs on
# the device, and gather() returns device tensors of device tensors.
def fit(model, opt, train_loader, eval_loader):
    model = model.to(accelerator.device)
    model, opt, train_loader, eval_loader = accelerator.prepare(model, opt, train_loader, eval_loader)
    for epoch in range(3):
        for step, batch in enumerate(train_loader):
            outputs = model(**batch)
            accelerator.backward(outputs.loss)
            opt.step()
            print(outputs.loss.item())  # expect: GPU601
        for batch in eval_loader:
            predictions = model(**batch).logits.argmax(dim=-1)
            predictions, references = accelerator.gather_for_metrics((predictions, batch["labels"]))
            print(f"{predictions}")  # expect: GPU601
        opt.zero_grad()
