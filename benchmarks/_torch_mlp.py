"""One plain torch MLP of the default search's kind, for the benchmarks that
probe an ingredient on a single network (``periodic_embeddings.py``,
``realmlp_ablation.py``): relu, (128, 128), dropout 0.15, a linear output,
trained by Adam with beta_2 = 0.95 on half the mean squared error, batches
of 200 rows, in float64."""

import torch

WIDTHS = (128, 128)
DROPOUT = 0.15


def hidden_layers(fan_in):
    """The hidden layers after an input of ``fan_in`` values:
    ``(modules, width of the last)``."""
    layers = []
    for width in WIDTHS:
        layers += [torch.nn.Linear(fan_in, width), torch.nn.ReLU(), torch.nn.Dropout(DROPOUT)]
        fan_in = width
    return layers, fan_in


def train_and_predict(net, groups, lr, X_train, y_train, X_test, seed, epochs):
    """Train ``net`` (float64) with Adam over the parameter ``groups`` (a
    group may set its own ``lr``) for ``epochs`` epochs, the batch order
    drawn from ``seed``; its predictions for ``X_test``."""
    optimizer = torch.optim.Adam(groups, lr=lr, betas=(0.9, 0.95))
    X, y = torch.as_tensor(X_train), torch.as_tensor(y_train).reshape(-1, 1)
    generator = torch.Generator().manual_seed(seed)
    net.train()
    for _ in range(epochs):
        for rows in torch.randperm(len(X), generator=generator).split(min(200, len(X))):
            optimizer.zero_grad()
            (0.5 * (net(X[rows]) - y[rows]).square().mean()).backward()
            optimizer.step()
    net.eval()
    with torch.no_grad():
        return net(torch.as_tensor(X_test)).numpy().ravel()
