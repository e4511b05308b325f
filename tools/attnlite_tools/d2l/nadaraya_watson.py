"""Nadaraya-Watson kernel regression (book 10.2).
"""
import torch
from torch import nn


# --------------------------------------------------------------------------------------
# Nadaraya-Watson kernel regression (book 10.2)
# --------------------------------------------------------------------------------------


def nw_f(x):
    return 2 * torch.sin(x) + x**0.8


def nw_data(n_train=50):
    """The book's toy data set (draws from the global torch RNG)."""
    x_train, _ = torch.sort(torch.rand(n_train) * 5)
    y_train = nw_f(x_train) + torch.normal(0.0, 0.5, (n_train,))
    x_test = torch.arange(0, 5, 0.1)
    y_truth = nw_f(x_test)
    return x_train, y_train, x_test, y_truth


def nw_nonparametric(x_train, y_train, x_test):
    """Gaussian kernel -(x - x_i)^2 / 2; returns (y_hat, attention_weights)."""
    n_train = len(x_train)
    X_repeat = x_test.repeat_interleave(n_train).reshape((-1, n_train))
    attention_weights = nn.functional.softmax(-(X_repeat - x_train)**2 / 2, dim=1)
    y_hat = torch.matmul(attention_weights, y_train)
    return y_hat, attention_weights


def nw_leave_one_out(x_train, y_train):
    """Training keys/values: each training input attends to all other examples."""
    n_train = len(x_train)
    X_tile = x_train.repeat((n_train, 1))
    Y_tile = y_train.repeat((n_train, 1))
    keep = (1 - torch.eye(n_train)).type(torch.bool)
    keys = X_tile[keep].reshape((n_train, -1))
    values = Y_tile[keep].reshape((n_train, -1))
    return keys, values


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,), requires_grad=True))

    def forward(self, queries, keys, values):
        # Shape of the output `queries` and `attention_weights`:
        # (no. of queries, no. of key-value pairs)
        queries = queries.repeat_interleave(keys.shape[1]).reshape(
            (-1, keys.shape[1]))
        self.attention_weights = nn.functional.softmax(
            -((queries - keys) * self.w)**2 / 2, dim=1)
        # Shape of `values`: (no. of queries, no. of key-value pairs)
        return torch.bmm(self.attention_weights.unsqueeze(1),
                         values.unsqueeze(-1)).reshape(-1)


def nw_train(net, x_train, y_train, num_epochs=5, lr=0.5):
    """The book's training loop; returns the per-epoch l.sum() values."""
    keys, values = nw_leave_one_out(x_train, y_train)
    loss = nn.MSELoss(reduction='none')
    trainer = torch.optim.SGD(net.parameters(), lr=lr)
    losses = []
    for epoch in range(num_epochs):
        trainer.zero_grad()
        l = loss(net(x_train, keys, values), y_train)
        l.sum().backward()
        trainer.step()
        losses.append(float(l.sum()))
    return losses
