"""Fixed: train on the logits with a cross-entropy loss; argmax only for the metric.

Pair of argmax_classification_broken.py. Cross-entropy is a smooth function of the
logits, so every weight gets a gradient; accuracy (which uses argmax) stays a metric.

    python examples/gallery/argmax_classification_fixed.py   # accuracy rises to ~0.99
    gradcheck examples/gallery/argmax_classification_fixed.py  # no finding
"""

import keras
import numpy as np

NUM_CLASSES = 3


def make_data(n=512, seed=0):
    """Three Gaussian blobs in the plane."""
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 3.0], [-3.0, -2.0], [3.0, -2.0]])
    labels = rng.integers(0, NUM_CLASSES, size=n)
    points = centers[labels] + rng.normal(size=(n, 2))
    return points.astype("float32"), labels.astype("int32")


def make_model():
    return keras.Sequential(
        [keras.Input(shape=(2,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(NUM_CLASSES)]
    )


if __name__ == "__main__":
    keras.utils.set_random_seed(0)
    x, y = make_data()
    model = make_model()
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    model.fit(x, y, epochs=5, batch_size=64, verbose=2)
