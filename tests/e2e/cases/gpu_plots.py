# Matplotlib makes NumPy arrays of what it plots (np.atleast_1d): a CUDA
# tensor, or a list of them kept per epoch, raises TypeError there. Floats
# made one by one cost a copy each (one stack and copy is the fix);
# Matplotlib's calls that take no data (figure, title, legend) are fine.
import matplotlib.pyplot as plt
import torch  # expect: GPU501/-


def curves(model, loader, epochs):
    model = model.cuda()
    train_acc = []
    for epoch in range(epochs):
        for x, y in loader:
            out = model(x.cuda())
        train_acc.append((out.argmax(1) == y.cuda()).float().mean())
    plt.figure()
    plt.plot(range(epochs), train_acc)  # expect: GPU604
    plt.plot(range(epochs), [float(a) for a in train_acc])  # expect: GPU601
    plt.plot(range(epochs), torch.stack(train_acc).cpu())
    weights = out[0]
    plt.plot(weights)  # expect: GPU604
    plt.title("accuracy")
    plt.legend()
