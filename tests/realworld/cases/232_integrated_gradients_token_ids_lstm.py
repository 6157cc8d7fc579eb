"""Real-world case 232.

Source: https://github.com/hiranumn/IntegratedGradients/issues/5
Bug: integrated gradients for a text classifier are taken with respect to the
model input, which is the sequence of word ids; the path points between the
baseline and the ids are fed to the Embedding layer, which casts them to
integer indices, so the gradient of the class score w.r.t. the scaled input is
None (the maintainer: "the Keras embedding layer is non-differentiable w.r.t.
data"; attribute to the embedding vectors instead).
Setting: Keras 3, Embedding + LSTM classifier, GradientTape inside @tf.function.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)
model = keras.Sequential([
    keras.Input((12,)),
    keras.layers.Embedding(50, 8),
    keras.layers.LSTM(8),
    keras.layers.Dense(2, activation="softmax"),
])


@tf.function
def path_gradients(token_ids, baseline, target_class, steps=8):
    alphas = tf.reshape(tf.linspace(0.0, 1.0, steps + 1), (-1, 1))
    scaled = baseline + alphas * (token_ids - baseline)
    with tf.GradientTape() as tape:
        tape.watch(scaled)
        probs = model(scaled)
        target = probs[:, target_class]
    return tape.gradient(target, scaled)


token_ids = tf.constant(np.random.randint(1, 50, size=(1, 12)), tf.float32)
baseline = tf.zeros_like(token_ids)
grads = path_gradients(token_ids, baseline, 1)
print("None gradients for:", ["scaled"] if grads is None else [])
