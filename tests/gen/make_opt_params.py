#!/usr/bin/python3
"""Writes the weights that tests/transform/opt_golden.sh binds with --params:
tests/transform/golden/convnet_params.npz for convnet_params.relay (a copy of
convnet.relay). Deterministic: a fixed seed. Run with /usr/bin/python3."""
import os
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "transform", "golden", "convnet_params.npz")

r = np.random.default_rng(20261130)
f32 = np.float32
np.savez(OUT,
         w1=r.standard_normal((8, 3, 3, 3)).astype(f32),
         g=(r.random(8) + 0.5).astype(f32),
         b=r.standard_normal(8).astype(f32),
         m=r.standard_normal(8).astype(f32),
         v=(r.random(8) + 0.5).astype(f32),
         w2=r.standard_normal((8, 8, 3, 3)).astype(f32),
         fc_w=r.standard_normal((10, 8)).astype(f32),
         fc_b=r.standard_normal(10).astype(f32))
print("wrote", OUT)
