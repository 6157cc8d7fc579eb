"""Real-world case 275.

Source: https://github.com/ericjang/gumbel-softmax/issues/12
Bug: the "hard" Gumbel-softmax sample (the issue's y_hard, one_hot(argmax(y))
or its equal(y, reduce_max(y)) form) is sent as the message directly, without
the straight-through term stop_gradient(y_hard - y) + y that the issue asks
about; argmax has no gradient, so the speaker that produces the logits gets
None everywhere while the listener trains, and the speaker's optimizer raises
"No gradients provided for any variable".
Setting: emergent-communication referential game (speaker and listener models,
two optimizers), Keras 3, eager GradientTape.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
N_OBJ, VOCAB, TAU = 8, 8, 1.0
speaker = keras.Sequential([keras.Input((N_OBJ,)), layers.Dense(16, activation="relu"), layers.Dense(VOCAB)], name="speaker")
listener = keras.Sequential([keras.Input((VOCAB,)), layers.Dense(16, activation="relu"), layers.Dense(N_OBJ)], name="listener")
s_opt, l_opt = keras.optimizers.Adam(1e-2), keras.optimizers.Adam(1e-2)


def gumbel_softmax(logits, temperature, hard=False):
    u = tf.random.uniform(tf.shape(logits), minval=1e-20, maxval=1.0)
    y = tf.nn.softmax((logits - tf.math.log(-tf.math.log(u))) / temperature)
    if hard:
        y = tf.one_hot(tf.argmax(y, 1), tf.shape(logits)[-1], dtype=y.dtype)
    return y


target = np.tile(np.arange(N_OBJ), 4)
objects = tf.one_hot(target, N_OBJ)
for step in range(3):
    with tf.GradientTape(persistent=True) as tape:
        message = gumbel_softmax(speaker(objects), TAU, hard=True)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(target, listener(message), from_logits=True))
    s_grads = tape.gradient(loss, speaker.trainable_variables)
    l_grads = tape.gradient(loss, listener.trainable_variables)
    print(step, float(loss), [v.path for v, g in zip(speaker.trainable_variables, s_grads) if g is None])
    l_opt.apply_gradients(zip(l_grads, listener.trainable_variables))
    s_opt.apply_gradients(zip(s_grads, speaker.trainable_variables))
