"""Real-world case 492.

Source: https://github.com/NeroLoh/darts-tensorflow/issues/1
Bug: a DARTS search step takes the architecture gradient from a loss computed before the
weights were updated ("train_grads_pos and train_grads_neg ... are equal due to the unchanged
train_loss": the TF1 port reused a loss built before the weight change). Here the same habit in
TF2 eager: the validation loss of the supernet is computed once at the top of the step, before the
persistent tape opens (and before the weight update), then reused for the architecture step. The
tape never recorded it, so tape.gradient(val_loss, [alphas]) is None, the architecture
parameters never move, and only the operation weights train.
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
    val_loss = tf.reduce_mean(tf.square(supernet(x_val) - y_val))
    with tf.GradientTape(persistent=True) as tape:
        train_loss = tf.reduce_mean(tf.square(supernet(x_tr) - y_tr))
    w_grads = tape.gradient(train_loss, weights)
    w_optimizer.apply_gradients(zip(w_grads, weights))
    a_grads = tape.gradient(val_loss, [alphas])
    del tape
    if a_grads[0] is None:
        print(f"step {step}: val={float(val_loss):.4f} architecture gradient is None -> alphas not updated")
    else:
        a_optimizer.apply_gradients(zip(a_grads, [alphas]))

print("alphas:", alphas.numpy(), "weight paths:", [v.path for v in weights][:2])
