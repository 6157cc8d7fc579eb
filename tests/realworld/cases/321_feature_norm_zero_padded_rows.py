"""Real-world case 321.

Source: https://github.com/tensorflow/tensorflow/issues/12071
Bug: "Numerical instability of gradient calculation of tf.norm (nan at 0, inf for small
values)": the gradient of the Euclidean norm of a zero vector is NaN. Here a feature-norm
regulariser (pulling every embedding towards unit length) meets the zero rows the input
pipeline pads the last batch with: their features are exactly zero, so the regulariser's
gradient is NaN for the feature layer's weights while the loss stays finite.
Setting: Keras 3 subclassed model with a custom train_step (model.fit), keras.ops.norm.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class Embedder(keras.Model):
    def __init__(self):
        super().__init__()
        self.features = keras.layers.Dense(16, use_bias=False)
        self.classify = keras.layers.Dense(4)

    def call(self, x):
        return self.classify(self.features(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            features = self.features(x)
            logits = self.classify(features)
            ce = keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True)
            norm_penalty = tf.square(keras.ops.norm(features, axis=-1) - 1.0)
            loss = tf.reduce_mean(ce + 0.1 * norm_penalty)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


x = np.concatenate([np.random.randn(60, 10), np.zeros((4, 10))]).astype("float32")  # padded to 64
y = np.concatenate([np.random.randint(0, 4, size=60), np.zeros(4, dtype=int)])
model = Embedder()
model.compile(optimizer="adam")
model.fit(x, y, batch_size=64, epochs=2, shuffle=False, verbose=0)
