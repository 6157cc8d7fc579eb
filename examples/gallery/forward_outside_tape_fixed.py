"""Fixed: the forward pass runs inside the tape.

Pair of forward_outside_tape_broken.py. Everything between the weights and the loss (the
model call, the loss, any transformation of the loss such as a negation) must happen
inside ``with tf.GradientTape() as tape:``; the predictions are still there for logging
afterwards.

    python examples/gallery/forward_outside_tape_fixed.py     # accuracy rises from ~0.3 to ~0.9
    gradcheck examples/gallery/forward_outside_tape_fixed.py  # no finding
"""

import keras
import numpy as np
import tensorflow as tf


def make_data(n=256, seed=0):
    """Two interleaved half-moons."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, size=n)
    angle = rng.uniform(0, np.pi, size=n)
    points = np.stack([np.cos(angle) + labels, np.sin(angle) * (1 - 2 * labels) + 0.5 * labels], axis=1)
    points += 0.1 * rng.normal(size=points.shape)
    return points.astype("float32"), labels.astype("float32")[:, None]


def make_model():
    return keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)])


if __name__ == "__main__":
    keras.utils.set_random_seed(0)
    x, y = make_data()
    model = make_model()
    optimizer = keras.optimizers.Adam(1e-2)
    bce = keras.losses.BinaryCrossentropy(from_logits=True)
    for step in range(1, 101):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = bce(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        if step == 1 or step % 25 == 0:
            accuracy = np.mean((logits.numpy() > 0) == (y > 0.5))
            print(f"step {step}: loss {float(loss):.4f}, accuracy {accuracy:.3f}")
