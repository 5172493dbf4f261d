"""Ops whose forward computes the wrong function, with a backward consistent with it
(the gradient check cannot see the bug), their right twins, and NumPy references."""

from __future__ import annotations

import numpy as np

import gradcheck as mg


def sigmoid_reference(x):
    return 1.0 / (1.0 + np.exp(-x))


def sigmoid_sign_flipped(x):
    # exp(x) for exp(-x): 1 - sigmoid(x), whose gradient the backward gets right
    return 1 / (1 + mg.exp(x))


def sigmoid(x):
    return 1 / (1 + mg.exp(-x))


def var_reference(x, ddof=0):
    return np.var(x, ddof=ddof)


def var_ignores_ddof(x, ddof=0):
    # the mean of squared deviations whatever ddof says
    d = x - mg.mean(x)
    return mg.sum(d * d) / x.size


def var(x, ddof=0):
    d = x - mg.mean(x)
    return mg.sum(d * d) / (x.size - ddof)


def min_max_reference(x):
    return np.min(x), np.max(x)


def min_max_swapped(x):
    return mg.max(x), mg.min(x)


def min_max(x):
    return mg.min(x), mg.max(x)
