"""The seeded parameter values of relay-tune's ir/random.c, in numpy.

relay-tune run --random-params SEED fills parameter %NAME with the stream
below; tests compare the interpreter with PyTorch on exactly these values, so
both sides must produce identical float32 bits:

  state  = fnv1a64(NAME) ^ (SEED * 0x9e3779b97f4a7c15)      (mod 2^64)
  x_i    = splitmix64 output number i + 1 from that state   (element i, C order)
  u_i    = (x_i >> 40) / 2^24                                 in [0, 1)
  float  = float32(lo + (hi - lo) * u_i)   computed in double
  int    = lo + x_i mod (hi - lo)
"""
import math

import numpy as np

GOLDEN = 0x9E3779B97F4A7C15
M64 = (1 << 64) - 1


def fnv1a64(s):
    h = 0xCBF29CE484222325
    for b in s.encode():
        h ^= b
        h = (h * 0x100000001B3) & M64
    return h


def stream(name, seed, n):
    """The n uint64 outputs of parameter `name`'s stream."""
    state = fnv1a64(name) ^ ((seed * GOLDEN) & M64)
    with np.errstate(over="ignore"):
        z = np.uint64(state) + (np.arange(1, n + 1, dtype=np.uint64) * np.uint64(GOLDEN))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def uniform(name, shape, seed, lo, hi, dtype=np.float32):
    n = int(np.prod(shape, dtype=np.int64))
    x = stream(name, seed, n)
    if np.dtype(dtype).kind == "f":
        u = (x >> np.uint64(40)).astype(np.float64) * (1.0 / 16777216.0)
        return (lo + (hi - lo) * u).astype(dtype).reshape(shape)
    if np.dtype(dtype) == np.bool_:
        u = (x >> np.uint64(40)).astype(np.float64) * (1.0 / 16777216.0)
        return (u < 0.5).reshape(shape)
    span = np.uint64(max(int(hi - lo), 1))
    return (int(lo) + (x % span).astype(np.int64)).astype(dtype).reshape(shape)


def he_bound(shape):
    """a of U(-a, a) for a conv2d / dense weight: sqrt(6 / fan_in)."""
    fan_in = 1.0
    for d in shape[1:]:
        fan_in *= float(d)
    return math.sqrt(6.0 / (fan_in if fan_in > 0 else 1.0))
