"""Clean control 892 (look-alike of case 492).

Source: https://github.com/NeroLoh/darts-tensorflow/issues/1
The corrected order for a first-order DARTS step: the supernet's validation loss is computed
inside the tape, on the current weights, before the weight update, so the tape records it and the
architecture logits get a nonzero gradient; the operation weights train on the training loss from
the same persistent tape.
Setting: Keras 3 layers for the candidate ops + a raw tf.Variable of architecture logits, eager
loop, one persistent tape for both levels.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
stem = keras.layers.Dense(16, activation="relu", name="stem")
candidates = [keras.layers.Dense(16, activation="relu", name="op_relu"),
              keras.layers.Dense(16, activation="tanh", name="op_tanh"), keras.layers.Identity(name="op_skip")]
head = keras.layers.Dense(1, name="head")
alphas = tf.Variable(1e-3 * tf.random.normal((len(candidates),)), name="alphas")


def supernet(x):
    h = stem(x)
    mix = tf.nn.softmax(alphas)
    h = tf.add_n([mix[i] * op(h) for i, op in enumerate(candidates)])
    return head(h)


x_all = np.random.normal(size=(256, 8)).astype("float32")
y_all = np.sin(x_all.sum(axis=1, keepdims=True)).astype("float32")
supernet(x_all[:1])
weights = [v for layer in [stem, *candidates, head] for v in layer.trainable_variables]
w_optimizer = keras.optimizers.SGD(0.05, momentum=0.9)
a_optimizer = keras.optimizers.Adam(3e-3)

for step in range(3):
    idx = np.random.permutation(256)
    x_tr, y_tr, x_val, y_val = x_all[idx[:64]], y_all[idx[:64]], x_all[idx[64:128]], y_all[idx[64:128]]
    with tf.GradientTape(persistent=True) as tape:
        val_loss = tf.reduce_mean(tf.square(supernet(x_val) - y_val))
        train_loss = tf.reduce_mean(tf.square(supernet(x_tr) - y_tr))
    a_grads = tape.gradient(val_loss, [alphas])
    w_grads = tape.gradient(train_loss, weights)
    del tape
    assert all(g is not None and np.any(g.numpy()) for g in a_grads + w_grads), "zero or missing gradient"
    a_optimizer.apply_gradients(zip(a_grads, [alphas]))
    w_optimizer.apply_gradients(zip(w_grads, weights))
    print(f"step {step}: train={float(train_loss):.4f} val={float(val_loss):.4f}")

print("alphas:", alphas.numpy())
