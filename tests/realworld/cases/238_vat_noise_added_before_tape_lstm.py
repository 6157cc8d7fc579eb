"""Real-world case 238.

Source: https://github.com/tensorflow/tensorflow/issues/40652
Bug: porting virtual adversarial training for an LSTM text classifier from
tf.gradients to GradientTape, the user watches the random perturbation `r` and
asks for the gradient of the KL divergence w.r.t. it, but the perturbed
embeddings fed to the LSTM were computed from `r` before the tape started, so
the gradient is None (the fix posted in the thread: add the noise first, then
watch the perturbed tensor that the LSTM consumes).
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
v_r = tf.add(v, r)
with tf.GradientTape() as tape:
    tape.watch(r)
    h1 = layers.LSTM(units=16, name="LSTM_layer_r")(v_r)
    p_logit_r = layers.Dense(units=10, name="Dense_layer_r")(h1)
    kl = compute_kld(p_logit, p_logit_r)
grad = tape.gradient(kl, r)
print(grad)
