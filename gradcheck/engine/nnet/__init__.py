"""``gradcheck.nnet``: neural-network activations, losses, layers and initializers,
with the public paths of ``mygrad.nnet`` (``gradcheck.nnet.activations.relu``,
``gradcheck.nnet.losses.softmax_crossentropy``, ``gradcheck.nnet.layers.conv_nd``,
``gradcheck.nnet.initializers.glorot_normal``...)."""

from __future__ import annotations

from gradcheck.engine.nnet import activations, initializers, layers, losses
from gradcheck.engine.nnet.activations import (
    elu,
    glu,
    hard_tanh,
    leaky_relu,
    logsoftmax,
    relu,
    selu,
    sigmoid,
    soft_sign,
    softmax,
    tanh,
)
from gradcheck.engine.nnet.layers import batchnorm, conv_nd, max_pool
from gradcheck.engine.nnet.losses import (
    focal_loss,
    margin_ranking_loss,
    multiclass_hinge,
    negative_log_likelihood,
    softmax_crossentropy,
    softmax_focal_loss,
)

__all__ = [
    "activations",
    "batchnorm",
    "conv_nd",
    "elu",
    "focal_loss",
    "glu",
    "hard_tanh",
    "initializers",
    "layers",
    "leaky_relu",
    "logsoftmax",
    "losses",
    "margin_ranking_loss",
    "max_pool",
    "multiclass_hinge",
    "negative_log_likelihood",
    "relu",
    "selu",
    "sigmoid",
    "soft_sign",
    "softmax",
    "softmax_crossentropy",
    "softmax_focal_loss",
    "tanh",
]
