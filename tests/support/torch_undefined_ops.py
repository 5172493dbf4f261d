"""torch Functions with several outputs whose backward mishandles an undefined (None)
upstream gradient, after native_group_norm's (its backward returned nothing when only
its mean or rstd output got a gradient), and their right twins."""

from __future__ import annotations

import torch

EPS = 1e-5


def _stats(x):
    mean = x.mean()
    rstd = (x.var(correction=0) + EPS).rsqrt()
    return (x - mean) * rstd, mean, rstd


def _grad_from_y(x, mean, rstd, gy):
    xhat = (x - mean) * rstd
    return rstd * (gy - gy.mean() - xhat * (gy * xhat).mean())


def _grad_from_stats(x, mean, rstd, gmean, grstd):
    n = x.numel()
    grad = torch.zeros_like(x)
    if gmean is not None:
        grad = grad + gmean / n
    if grstd is not None:
        grad = grad - grstd * rstd**3 * (x - mean) / n
    return grad


class _Normalize(torch.autograd.Function):
    """(y, mean, rstd) of x (over all its elements), torch's undefined gradients
    passed on as None."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        y, mean, rstd = _stats(x)
        ctx.save_for_backward(x, mean, rstd)
        return y, mean, rstd


class NormalizeNothingWithoutY(_Normalize):
    # native_group_norm's bug: no gradient at all when y gets none
    @staticmethod
    def backward(ctx, gy, gmean, grstd):
        if gy is None:
            return None
        x, mean, rstd = ctx.saved_tensors
        return _grad_from_y(x, mean, rstd, gy) + _grad_from_stats(x, mean, rstd, gmean, grstd)


class NormalizeAssumesTensors(_Normalize):
    # written for materialized gradients: crashes on None
    @staticmethod
    def backward(ctx, gy, gmean, grstd):
        x, mean, rstd = ctx.saved_tensors
        n = x.numel()
        return _grad_from_y(x, mean, rstd, gy) + gmean / n - grstd * rstd**3 * (x - mean) / n


class NormalizeOnlyY(_Normalize):
    # drops the statistics' gradients when y's is undefined, keeps them otherwise
    @staticmethod
    def backward(ctx, gy, gmean, grstd):
        x, mean, rstd = ctx.saved_tensors
        if gy is None:
            return torch.zeros_like(x)
        return _grad_from_y(x, mean, rstd, gy) + _grad_from_stats(x, mean, rstd, gmean, grstd)


class Normalize(_Normalize):
    @staticmethod
    def backward(ctx, gy, gmean, grstd):
        x, mean, rstd = ctx.saved_tensors
        grad = _grad_from_stats(x, mean, rstd, gmean, grstd)
        if gy is not None:
            grad = grad + _grad_from_y(x, mean, rstd, gy)
        return grad


class NormalizeMaterialized(torch.autograd.Function):
    # torch's default: undefined gradients arrive as zeros, no None to handle
    @staticmethod
    def forward(ctx, x):
        y, mean, rstd = _stats(x)
        ctx.save_for_backward(x, mean, rstd)
        return y, mean, rstd

    @staticmethod
    def backward(ctx, gy, gmean, grstd):
        x, mean, rstd = ctx.saved_tensors
        n = x.numel()
        return _grad_from_y(x, mean, rstd, gy) + gmean / n - grstd * rstd**3 * (x - mean) / n


def normalize(x):
    """The same as a function of torch tensors (torch's own backward)."""
    mean = torch.mean(x)
    rstd = torch.rsqrt(torch.var(x, correction=0) + EPS)
    return (x - mean) * rstd, mean, rstd
