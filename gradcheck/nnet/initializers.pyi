# For type checkers: MyGrad's path to the engine's module below (at run time the
# import finder in gradcheck/__init__.py gives that very module).
from gradcheck.engine.nnet.initializers import *  # noqa: F403
