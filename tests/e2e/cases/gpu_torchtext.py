# torchtext's legacy iterators put each batch on the device they are given.
import torch  # expect: GPU501/-
from torchtext.legacy import data

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
train_iterator, valid_iterator = data.BucketIterator.splits((1, 2), batch_size=64, device=device)
cpu_iterator = data.BucketIterator(1, batch_size=64, device="cpu")


def train(model, iterator, criterion):
    epoch_loss = 0
    for batch in iterator:
        text, lengths = batch.text
        loss = criterion(model(text, lengths), batch.label)
        loss.backward()
        epoch_loss += loss.item()  # expect: GPU601
    return epoch_loss


def count(iterator):
    n = 0
    for batch in iterator:
        n += batch.label.sum().item()
    return n


for epoch in range(5):
    train(None, train_iterator, None)
    count(cpu_iterator)
