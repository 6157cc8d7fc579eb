"""Mutation benchmark: real third-party training programs, one injected bug per mutant.

Run as ``python -m benchmarks.mutation``; see ``benchmarks/README.md`` and ``docs/accuracy.md``.
Ground truth comes from TensorFlow itself (``probe/sitecustomize.py``), never from gradcheck.
"""
