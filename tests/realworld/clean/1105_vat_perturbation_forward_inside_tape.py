"""Real-world control 1105 (twin of case 1085).

Source: https://github.com/tensorflow/tensorflow/issues/40652
Fixed: as in the reporter's final solution, the perturbed input is watched
and the model is applied to it inside the GradientTape, so the KL divergence
is differentiable with respect to the perturbation `d`.
Setting: tf_keras (Keras 2) functional classifier, eager tape, gradient w.r.t. an input perturbation (semi-supervised VAT).
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import layers

np.random.seed(0)
tf.random.set_seed(0)
keras.utils.set_random_seed(0)
XI, EPS = 1e-6, 2.0

inputs = keras.Input((20,))
h = layers.Dense(64, activation="relu")(inputs)
logits = layers.Dense(10)(h)
model = keras.Model(inputs, logits)


def kl_divergence_with_logit(q_logit, p_logit):
    q = tf.nn.softmax(q_logit)
    return tf.reduce_mean(tf.reduce_sum(
        q * (tf.nn.log_softmax(q_logit) - tf.nn.log_softmax(p_logit)), axis=1))


def virtual_adversarial_perturbation(x, logit_p):
    d = tf.random.normal(tf.shape(x))
    d = XI * tf.math.l2_normalize(d, axis=1)
    with tf.GradientTape() as tape:
        tape.watch(d)
        logit_m = model(x + d)
        dist = kl_divergence_with_logit(tf.stop_gradient(logit_p), logit_m)
    grad = tape.gradient(dist, d)
    print("gradient of the KL w.r.t. d:", grad)
    if grad is None:
        return None
    return EPS * tf.math.l2_normalize(tf.stop_gradient(grad), axis=1)


x_unlabeled = tf.constant(np.random.normal(size=(32, 20)).astype("float32"))
r_adv = virtual_adversarial_perturbation(x_unlabeled, model(x_unlabeled))
print("r_adv:", None if r_adv is None else r_adv.shape)
