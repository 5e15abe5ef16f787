"""triton.language for the NumPy stand-in (see __init__.py): blocks are NumPy arrays, pointers
are (flat array, element offsets) pairs, masked loads and stores touch only the elements the
mask keeps, and tl.dot refuses blocks smaller than 16 as Triton does."""
import numpy as np

_program_ids = (0, 0, 0)


class constexpr:  # an annotation only
    pass


float32 = np.float64
float16 = np.float64
bfloat16 = np.float64
int32 = np.int64
int64 = np.int64


class _Block(np.ndarray):
    """A block of values; .to(dtype) keeps them (the stand-in computes in float64)."""

    def to(self, _dtype, **_kw):
        return self


def _block(a):
    return np.asarray(a).view(_Block)


class _Ptr:
    """A pointer into a tensor's elements: `base` (flat) plus element offsets `off`."""
    __array_ufunc__ = None  # ndarray + _Ptr comes here (__radd__), not to NumPy

    def __init__(self, base, off=0):
        self.base = base
        self.off = off

    def __add__(self, other):
        return _Ptr(self.base, self.off + (np.asarray(other) if isinstance(other, np.ndarray)
                                           else other))

    __radd__ = __add__


def program_id(axis):
    return _program_ids[axis]


def arange(start, end):
    return _block(np.arange(start, end))


def zeros(shape, dtype=None):
    return _block(np.zeros(shape))


def full(shape, value, dtype=None):
    return _block(np.full(shape, value, dtype=float))


def _where(ptr, mask):
    off = np.asarray(ptr.off)
    if mask is None:
        return off, np.ones(off.shape, dtype=bool)
    off, mask = np.broadcast_arrays(off, np.asarray(mask))
    return off, mask


def load(ptr, mask=None, other=0.0):
    if mask is None and np.ndim(ptr.off) == 0:
        return ptr.base[int(ptr.off)].item()
    off, mask = _where(ptr, mask)
    out = np.full(off.shape, other, dtype=ptr.base.dtype)
    out[mask] = ptr.base[off[mask]]
    return _block(out)


def store(ptr, value, mask=None):
    off, mask = _where(ptr, mask)
    value = np.broadcast_to(np.asarray(value), off.shape)
    ptr.base[off[mask]] = value[mask]


def atomic_add(ptr, value, mask=None):
    off, mask = _where(ptr, mask)
    value = np.broadcast_to(np.asarray(value), off.shape)
    np.add.at(ptr.base, off[mask], value[mask])


def dot(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 2 or b.ndim != 2 or min(a.shape + b.shape) < 16:
        raise ValueError(f"tl.dot: blocks of at least 16 x 16 expected, got {a.shape} and "
                         f"{b.shape}")
    return _block(a.astype(np.float64) @ b.astype(np.float64))


def trans(a):
    return _block(np.asarray(a).T)


def where(cond, a, b):
    return _block(np.where(cond, a, b))


def maximum(a, b):
    return _block(np.maximum(a, b))


def minimum(a, b):
    return _block(np.minimum(a, b))
