"""A NumPy stand-in for the part of Triton that scripts/lora_sgmv.py's kernels use, so that CI
runs those kernels on the CPU (tests/scripts/profile_lora_verify_test.sh puts this folder first
on PYTHONPATH). Not Triton: a launch runs the kernel's Python body once per program id, in
order, with tensors as float64 (or int64) NumPy copies that are written back after the launch;
it checks the kernels' indexing, masks, split-K accumulation and results, not their speed or
their numerics in bf16. `runs_on_cpu` tells the scripts that this Triton takes CPU tensors.
"""
import itertools

from . import language

runs_on_cpu = True
__version__ = "numpy-shim"


def cdiv(a, b):
    return (a + b - 1) // b


def next_power_of_2(n):
    p = 1
    while p < n:
        p *= 2
    return p


def _is_tensor(x):
    return hasattr(x, "data_ptr") and hasattr(x, "stride")


def _launch(fn, grid, args, meta):
    if callable(grid):
        grid = grid(meta)
    grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
    flats, converted = [], []
    for a in args:
        if _is_tensor(a):
            import torch
            # The tensor's elements from its first one on, as one flat view sharing its storage:
            # offsets computed from its strides address it as on a GPU.
            span = 1 + sum((n - 1) * s for n, s in zip(a.shape, a.stride())) if a.numel() else 0
            flat = torch.as_strided(a, (span,), (1,))
            wide = torch.float64 if a.is_floating_point() else torch.int64
            arr = flat.detach().to(wide).numpy().copy()
            flats.append((flat, arr))
            converted.append(language._Ptr(arr))
        else:
            converted.append(a)
    for pid in itertools.product(*(range(g) for g in grid)):
        language._program_ids = pid
        fn(*converted, **meta)
    import torch
    with torch.no_grad():
        for flat, arr in flats:
            flat.copy_(torch.from_numpy(arr).to(flat.dtype))


class _Kernel:
    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, grid):
        return lambda *args, **meta: _launch(self.fn, grid, args, meta)


def jit(fn=None, **_options):
    if fn is None:
        return lambda f: _Kernel(f)
    return _Kernel(fn)
