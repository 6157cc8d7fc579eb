"""Whether a zero is structural rather than a draw of the batch: it survives a 1% relative
jitter of the op's input, and a ReLU is off on several samples and by a margin."""

from __future__ import annotations

import numpy as np

_JITTER = 0.01  # relative perturbation of an op's input for the structural test
_DEAD_MIN_SAMPLES = 4  # a ReLU unit off on fewer samples than this is not dead for sure
_DEAD_MARGIN = 0.05  # ... nor one whose largest input is within 5% of the inputs' RMS of zero


def jitter(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    scale = float(np.sqrt(np.mean(np.square(x)))) if x.size else 0.0
    noise = rng.standard_normal(x.shape)
    return x + _JITTER * (np.abs(x) + scale) * noise


def off_by_structure(x: np.ndarray, values: np.ndarray, upper: float | None) -> bool:
    """Whether a ReLU's inputs ``values`` (those of ``x`` that matter) are off by structure:
    each unit on several samples, and by a margin. Units all negative on one or two samples,
    or just below zero, are a draw of the initialisation and the batch (a GAN's one-sample
    step), not a dead layer."""
    samples = x.size // x.shape[-1] if x.ndim >= 2 and x.shape[-1] else x.size
    if not values.size or samples < _DEAD_MIN_SAMPLES:
        return False
    gap = -values if upper is None else np.where(values <= 0, -values, values - upper)
    return float(np.min(gap)) >= _DEAD_MARGIN * float(np.sqrt(np.mean(np.square(values))))
