"""Real-world case 487.

Source: https://github.com/tensorflow/tensorflow/issues/19556
Bug: a statistical model has one trainable parameter per sample (here a per-sample
log noise scale of a heteroscedastic regression). The per-sample value is looked up
inside the tf.data pipeline (dataset.map gathers from the tf.Variable), so each batch
arrives with the parameter already read as a plain tensor. The lookup happens in the
input pipeline, outside the GradientTape, and the gradient w.r.t. the per-sample
variable is None (the reporter's StackOverflow question: "Dataset API gradient is
None"; the report's workaround passes the indices through the pipeline instead).
Setting: TF2 eager custom training loop, Keras 3 Dense model plus a standalone
tf.Variable, tf.data map/batch pipeline.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)
N = 64

x_all = np.random.normal(size=(N, 3)).astype("float32")
y_all = (x_all.sum(1, keepdims=True) + np.random.normal(0, 0.3, (N, 1))).astype("float32")
sample_log_scale = tf.Variable(tf.zeros((N, 1)), name="sample_log_scale")


def attach_sample_params(i, x, y):
    return x, y, tf.gather(sample_log_scale, i)


dataset = (tf.data.Dataset.from_tensor_slices((np.arange(N), x_all, y_all))
           .map(attach_sample_params).batch(16))
model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation="tanh"),
                          keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(1e-2)
variables = model.trainable_variables + [sample_log_scale]

for step, (x, y, log_scale) in enumerate(dataset):
    with tf.GradientTape() as tape:
        pred = model(x)
        nll = 0.5 * tf.exp(-2.0 * log_scale) * tf.square(y - pred) + log_scale
        loss = tf.reduce_mean(nll)
    grads = tape.gradient(loss, variables)
    none = [v.name for v, g in zip(variables, grads) if g is None]
    if none:
        print("None gradients for:", none)
    optimizer.apply_gradients([(g, v) for g, v in zip(grads, variables) if g is not None])
    print("step", step, "loss", float(loss))
