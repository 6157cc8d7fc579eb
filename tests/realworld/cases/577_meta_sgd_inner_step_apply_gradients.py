"""Real-world case 577.

Source: https://github.com/tensorflow/tensorflow/issues/55181
Bug: a Meta-SGD style meta-learner learns the inner-loop learning rate
(log_inner_lr) together with the initial weights. The inner adaptation step is
taken with inner_opt.apply_gradients(...) inside the outer tape, and the query
loss is then computed with the adapted model. apply_gradients writes the new
weights with assign ops, which have no gradient, so the meta-gradient with
respect to the learned inner learning rate is None (the weights only get a
first-order gradient from the query loss).
Setting: meta-learning, nested GradientTapes, optimizer.apply_gradients in the inner loop.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

log_inner_lr = tf.Variable(np.log(0.05), dtype=tf.float32, name="log_inner_lr")
inner_opt = keras.optimizers.SGD(learning_rate=lambda: tf.exp(log_inner_lr))
meta_opt = keras.optimizers.Adam(1e-3)

model = keras.Sequential([
    keras.Input((1,)),
    layers.Dense(32, activation="tanh"),
    layers.Dense(32, activation="tanh"),
    layers.Dense(1),
])
inner_opt.build(model.trainable_variables)
meta_params = [log_inner_lr] + model.trainable_variables


def sample_task(rng):
    amplitude, phase = rng.uniform(0.5, 2.0), rng.uniform(0.0, np.pi)
    xs = rng.uniform(-5.0, 5.0, size=(20, 1)).astype("float32")
    ys = (amplitude * np.sin(xs + phase)).astype("float32")
    return xs[:10], ys[:10], xs[10:], ys[10:]


rng = np.random.default_rng(0)
for meta_step in range(3):
    x_support, y_support, x_query, y_query = sample_task(rng)
    with tf.GradientTape() as outer_tape:
        with tf.GradientTape() as inner_tape:
            support_loss = tf.reduce_mean(tf.square(model(x_support) - y_support))
        grads = inner_tape.gradient(support_loss, model.trainable_variables)
        inner_opt.apply_gradients(zip(grads, model.trainable_variables))
        query_loss = tf.reduce_mean(tf.square(model(x_query) - y_query))
    meta_grads = outer_tape.gradient(query_loss, meta_params)
    missing = [getattr(v, "path", v.name) for g, v in zip(meta_grads, meta_params) if g is None]
    print("meta step", meta_step, "query loss", float(query_loss), "None gradients for:", missing)
    meta_opt.apply_gradients([(g, v) for g, v in zip(meta_grads, meta_params) if g is not None])
