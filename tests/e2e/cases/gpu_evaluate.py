# Hugging Face Evaluate's add_batch casts the tensors it is given to NumPy
# (datasets' ArrowWriter: .detach().cpu().numpy()): with device tensors, a
# copy per evaluation batch. Host tensors, or one compute() after the loop,
# are fine.
import evaluate
import torch  # expect: GPU501/-


def run(model, loader):
    metric = evaluate.load("glue", "mrpc")
    model = model.cuda()
    for batch in loader:
        preds = model(batch.cuda()).argmax(-1)
        metric.add_batch(predictions=preds, references=batch.cuda())  # expect: GPU601
    return metric.compute()


def run_on_host(model, loader):
    metric = evaluate.load("accuracy")
    for batch in loader:
        metric.add_batch(predictions=model(batch).argmax(-1), references=batch)
    return metric.compute()
