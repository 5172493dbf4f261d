"""Engine internals at the paths MyGrad keeps them (``mygrad._utils``): memory guarding
(:mod:`~gradcheck._utils.lock_management`) and the graph-tracking switch
(:mod:`~gradcheck._utils.graph_tracking`)."""
