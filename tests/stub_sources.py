"""Our own stand-ins for packages' modules that several tests install in a site-packages tree, so real CPython
prints the traceback a user's paste shows (the messages are the packages' own words; the code is ours)."""

# torch's operator namespace, as torch/_ops.py words a missing operator and pybind_utils.h a call its schema refuses.
TORCH_OPS = '''
class _OpNamespace:
    def __init__(self, name, registered):
        self.name = name
        self.registered = registered

    def __getattr__(self, op_name):
        if op_name not in self.registered:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
        declared = self.registered[op_name]

        def call(*args):
            if len(args) > declared:
                raise RuntimeError(f"{self.name}::{op_name}() expected at most {declared} argument(s) but received "
                                   f"{len(args)} argument(s). Declaration: {self.name}::{op_name}(...) -> Tensor[]")
        return call
'''

VLLM_CUSTOM_OPS = '''
from torch._ops import _OpNamespace

_C = _OpNamespace("_C", {})


def rms_norm(out, x, weight, epsilon):
    _C.rms_norm(out, x, weight, epsilon)
'''
