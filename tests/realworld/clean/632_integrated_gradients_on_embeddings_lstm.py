"""Clean control 632 (expected clean).

Integrated gradients for the Embedding + LSTM classifier of case 232 taken
with respect to the embedding vectors: the ids and the baseline are looked up
once, the path is interpolated between the two embeddings, and the layers
after the Embedding run on the watched, interpolated vectors.
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
embedding, lstm, head = model.layers


@tf.function
def path_gradients(token_ids, baseline, target_class, steps=8):
    alphas = tf.reshape(tf.linspace(0.0, 1.0, steps + 1), (-1, 1, 1))
    input_vectors = embedding(token_ids)
    baseline_vectors = embedding(baseline)
    scaled = baseline_vectors + alphas * (input_vectors - baseline_vectors)
    with tf.GradientTape() as tape:
        tape.watch(scaled)
        probs = head(lstm(scaled))
        target = probs[:, target_class]
    return tape.gradient(target, scaled)


token_ids = tf.constant(np.random.randint(1, 50, size=(1, 12)), tf.float32)
baseline = tf.zeros_like(token_ids)
grads = path_gradients(token_ids, baseline, 1)
assert grads is not None
print("attributions per token:", tf.reduce_sum(tf.reduce_mean(grads, axis=0), axis=-1).numpy())
