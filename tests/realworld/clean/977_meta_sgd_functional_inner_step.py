"""Clean control 977 (expected clean).

Look-alike of case 577: the Meta-SGD inner step is written functionally
(fast weights = w - exp(log_inner_lr) * g) and the query loss is computed with
model.stateless_call on the fast weights, so the meta-gradient reaches both the
learned inner learning rate and the initial weights.
Setting: meta-learning, nested GradientTapes, functional inner step.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

log_inner_lr = tf.Variable(np.log(0.05), dtype=tf.float32, name="log_inner_lr")
meta_opt = keras.optimizers.Adam(1e-3)

model = keras.Sequential([
    keras.Input((1,)),
    layers.Dense(32, activation="tanh"),
    layers.Dense(32, activation="tanh"),
    layers.Dense(1),
])
meta_params = [log_inner_lr] + model.trainable_variables


def sample_task(rng):
    amplitude, phase = rng.uniform(0.5, 2.0), rng.uniform(0.0, np.pi)
    xs = rng.uniform(-5.0, 5.0, size=(20, 1)).astype("float32")
    ys = (amplitude * np.sin(xs + phase)).astype("float32")
    return xs[:10], ys[:10], xs[10:], ys[10:]


rng = np.random.default_rng(0)
for meta_step in range(60):
    x_support, y_support, x_query, y_query = sample_task(rng)
    with tf.GradientTape() as outer_tape:
        with tf.GradientTape() as inner_tape:
            support_loss = tf.reduce_mean(tf.square(model(x_support) - y_support))
        grads = inner_tape.gradient(support_loss, model.trainable_variables)
        fast_weights = [w - tf.exp(log_inner_lr) * g for w, g in zip(model.trainable_variables, grads)]
        query_pred, _ = model.stateless_call(fast_weights, model.non_trainable_variables, x_query)
        query_loss = tf.reduce_mean(tf.square(query_pred - y_query))
    meta_grads = outer_tape.gradient(query_loss, meta_params)
    meta_opt.apply_gradients(zip(meta_grads, meta_params))
    if meta_step % 20 == 0:
        print("meta step", meta_step, "query loss", float(query_loss), "inner lr", float(tf.exp(log_inner_lr)))
