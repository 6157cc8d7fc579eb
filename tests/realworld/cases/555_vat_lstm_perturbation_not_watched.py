"""Real-world case 555.

Source: https://github.com/tensorflow/tensorflow/issues/40652
Bug: virtual adversarial training (VAT) for an LSTM text classifier. The
random perturbation r is added to the embedded sequence v, the model is run
on v + r inside a GradientTape and the KL divergence between the clean and
the perturbed predictions is differentiated w.r.t. r to get the adversarial
direction. r is a plain tensor that was never passed to tape.watch, so the
tape did not record it and tape.gradient(kl, r) is None (the thread's fix is
tape.watch(r)).
Setting: adversarial perturbation (VAT/FGSM-like), eager GradientTape w.r.t. an input.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

seq_len, emb_dim, n_classes = 12, 16, 10
inputs = keras.Input(shape=(seq_len, emb_dim))
h1 = layers.LSTM(units=32, name="LSTM_layer")(inputs)
logits = layers.Dense(units=n_classes, name="Dense_layer")(h1)
model = keras.Model(inputs, logits, name="vat_classifier")

rng = np.random.default_rng(0)
v = tf.constant(rng.normal(size=(8, seq_len, emb_dim)).astype("float32"))


def compute_kld(p_logit, q_logit):
    p = tf.nn.softmax(p_logit)
    return tf.reduce_mean(tf.reduce_sum(p * (tf.nn.log_softmax(p_logit) - tf.nn.log_softmax(q_logit)), axis=1))


def virtual_adversarial_direction(v, xi=1e-6):
    p_logit = tf.stop_gradient(model(v))
    r = tf.random.uniform(shape=tf.shape(v), minval=0.001, maxval=0.005)
    r = tf.add(v, r)
    with tf.GradientTape() as tape:
        p_logit_r = model(r)
        kl = compute_kld(p_logit, p_logit_r)
    grad = tape.gradient(kl, r)
    return grad


grad = virtual_adversarial_direction(v)
if grad is None:
    print("None gradients for: ['r']")
else:
    print("adversarial direction norm", float(tf.norm(grad)))
