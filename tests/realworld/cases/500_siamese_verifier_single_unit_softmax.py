"""Real-world case 500.

Source: https://techqa.club/v/q/activation-functions-softmax-vs-sigmoid-65258468
(mirror of StackOverflow question 65258468, "Activation functions: Softmax vs Sigmoid")
Bug: the binary "same / different" head is one unit wide and the model applies
softmax to it. A softmax over a single logit is exactly 1.0 for every input, so
its gradient is identically zero: the loss sits at the same value step after
step and every encoder and head weight receives an all-zero gradient (no error,
no warning). The report: accuracy stuck at 0.50 with Dense(1, softmax), 0.98
with sigmoid.
Setting: Keras 3 subclassed siamese verifier (shared encoder, |e1 - e2| head),
hand-written binary cross-entropy, eager custom training loop.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class SiameseVerifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = keras.Sequential(
            [keras.layers.Dense(32, activation="relu"), keras.layers.Dense(16, activation="tanh")]
        )
        self.head = keras.layers.Dense(1)

    def call(self, inputs):
        left, right = inputs
        distance = tf.abs(self.encoder(left) - self.encoder(right))
        return tf.nn.softmax(self.head(distance))


def binary_crossentropy(y_true, p, eps=1e-7):
    return -tf.reduce_mean(y_true * tf.math.log(p + eps) + (1.0 - y_true) * tf.math.log(1.0 - p + eps))


x_left = np.random.rand(64, 10).astype("float32")
same = np.random.rand(64, 1) < 0.5
x_right = np.where(same, x_left + 0.05 * np.random.randn(64, 10), np.random.rand(64, 10)).astype("float32")
y = same.astype("float32")

model = SiameseVerifier()
optimizer = keras.optimizers.Adam(1e-3)

for step in range(3):
    with tf.GradientTape() as tape:
        p_same = model((x_left, x_right), training=True)
        loss = binary_crossentropy(y, p_same)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(f"step {step}: loss={float(loss):.4f}")
