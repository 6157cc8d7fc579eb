"""Clean twin of case 555.

Source: https://github.com/tensorflow/tensorflow/issues/40652
Fix: tape.watch(r) before the perturbed forward pass, so the adversarial
direction d(KL)/d(r) exists; the VAT term then trains the classifier.
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
y = tf.constant(rng.integers(0, n_classes, size=(8,)))
optimizer = keras.optimizers.Adam(1e-2)


def compute_kld(p_logit, q_logit):
    p = tf.nn.softmax(p_logit)
    return tf.reduce_mean(tf.reduce_sum(p * (tf.nn.log_softmax(p_logit) - tf.nn.log_softmax(q_logit)), axis=1))


def virtual_adversarial_direction(v, xi=1e-6):
    p_logit = tf.stop_gradient(model(v))
    r = tf.random.uniform(shape=tf.shape(v), minval=0.001, maxval=0.005)
    r = tf.add(v, r)
    with tf.GradientTape() as tape:
        tape.watch(r)
        p_logit_r = model(r)
        kl = compute_kld(p_logit, p_logit_r)
    grad = tape.gradient(kl, r)
    return grad


grad = virtual_adversarial_direction(v)
if grad is None:
    print("None gradients for: ['r']")
else:
    print("adversarial direction norm", float(tf.norm(grad)))

r_adv = tf.stop_gradient(2.0 * tf.math.l2_normalize(grad, axis=[1, 2]))
for step in range(5):
    with tf.GradientTape() as tape:
        p_logit = model(v)
        ce = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, p_logit, from_logits=True))
        vat = compute_kld(tf.stop_gradient(p_logit), model(v + r_adv))
        loss = ce + vat
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(step, float(loss))
