"""Clean control 804 (look-alike of case 404).

Source: https://github.com/pumpikano/tf-dann/issues/27
The thread's gradient-reversal layer as written: the reversed gradient for
the features and None for the constant coefficient l, which nothing trains.
A custom gradient that returns None for a non-trainable input starves nothing.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


@tf.custom_gradient
def flip_gradient(x, l):
    def grad(dy):
        return tf.negative(dy) * l, None

    return tf.identity(x), grad


features = keras.Sequential([keras.Input((10,)), keras.layers.Dense(16, activation="relu", name="features")],
                            name="extractor")
label_head = keras.Sequential([keras.Input((16,)), keras.layers.Dense(3, name="label")], name="label_head")
domain_head = keras.Sequential([keras.Input((16,)), keras.layers.Dense(1, name="domain")], name="domain_head")
opt_task = keras.optimizers.Adam(1e-3)
opt_adv = keras.optimizers.Adam(1e-3)

x_src = np.random.randn(32, 10).astype("float32")
y_src = np.random.randint(0, 3, 32)
x_tgt = np.random.randn(32, 10).astype("float32") + 1.0
domains = np.concatenate([np.zeros(32), np.ones(32)]).astype("float32")[:, None]

for step in range(2):
    with tf.GradientTape(persistent=True) as tape:
        h_src = features(x_src)
        task_loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y_src, label_head(h_src),
                                                                               from_logits=True))
        h_all = features(np.concatenate([x_src, x_tgt]))
        d_logits = domain_head(flip_gradient(h_all, tf.constant(0.3)))
        domain_loss = tf.reduce_mean(keras.losses.binary_crossentropy(domains, d_logits, from_logits=True))
    task_vars = features.trainable_variables + label_head.trainable_variables
    adv_vars = features.trainable_variables + domain_head.trainable_variables
    opt_task.apply_gradients(zip(tape.gradient(task_loss, task_vars), task_vars))
    opt_adv.apply_gradients(zip(tape.gradient(domain_loss, adv_vars), adv_vars))
    del tape
    print(step, float(task_loss), float(domain_loss))
