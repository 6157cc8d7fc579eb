"""Clean control 638 (expected clean).

The virtual-adversarial-training step of case 238 with the noise added to the
embeddings inside the tape, after tape.watch(r), so the KL divergence has a
gradient w.r.t. the perturbation.
Setting: Keras 2 (tf_keras), Embedding + LSTM, eager GradientTape, gradient
w.r.t. an input perturbation.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers

tf.random.set_seed(0)


def compute_kld(p_logit, q_logit):
    p = tf.nn.softmax(p_logit)
    q = tf.nn.softmax(q_logit)
    return tf.reduce_sum(p * (tf.math.log(p + 1e-16) - tf.math.log(q + 1e-16)), axis=1)


tokens = np.random.randint(1, 100, size=(4, 20))
v = layers.Embedding(input_dim=100, output_dim=16)(tokens)
p_logit = layers.Dense(units=10)(layers.LSTM(units=16)(v))

r = tf.random.uniform(shape=tf.shape(v), minval=0.001, maxval=0.005)
with tf.GradientTape() as tape:
    tape.watch(r)
    v_r = tf.add(v, r)
    h1 = layers.LSTM(units=16, name="LSTM_layer_r")(v_r)
    p_logit_r = layers.Dense(units=10, name="Dense_layer_r")(h1)
    kl = compute_kld(p_logit, p_logit_r)
grad = tape.gradient(kl, r)
assert grad is not None
print("adversarial direction norm:", float(tf.norm(grad)))
