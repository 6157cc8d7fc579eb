"""Real-world case 1055.

Source: https://github.com/tensorflow/tensorflow/issues/24728
Bug: the `labels` of `tf.nn.ctc_loss` are produced by a second RNN (RNN2):
its per-step class scores go through `tf.argmax` to become the integer label
sequence, and RNN1's logits are scored against them. Both networks'
variables are handed to one optimizer, but only RNN1 ever changes: the
argmax (and ctc_loss's integer labels) carry no gradient back into RNN2,
and Keras warns that gradients do not exist for RNN2's variables.
Setting: tf.function custom training step, two Keras 3 GRU models, ctc_loss.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

num_classes = 6           # real classes; blank is the last index
T, L, feat_dim = 20, 5, 8
batch = 8

rnn1 = keras.Sequential([
    keras.Input(shape=(T, feat_dim)),
    layers.GRU(16, return_sequences=True),
    layers.Dense(num_classes + 1),
], name="rnn1")
rnn2 = keras.Sequential([
    keras.Input(shape=(L, feat_dim)),
    layers.GRU(16, return_sequences=True),
    layers.Dense(num_classes),
], name="rnn2")
optimizer = keras.optimizers.Adam(1e-3)
variables = rnn1.trainable_variables + rnn2.trainable_variables

rng = np.random.default_rng(0)
audio = rng.normal(size=(64, T, feat_dim)).astype("float32")
prompts = rng.normal(size=(64, L, feat_dim)).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((audio, prompts)).batch(batch)


@tf.function
def train_step(x, prompt):
    with tf.GradientTape() as tape:
        logits = rnn1(x, training=True)
        label_scores = rnn2(prompt, training=True)
        labels = tf.argmax(label_scores, axis=-1, output_type=tf.int32)
        loss = tf.reduce_mean(tf.nn.ctc_loss(
            labels=labels,
            logits=logits,
            label_length=tf.fill([tf.shape(x)[0]], L),
            logit_length=tf.fill([tf.shape(x)[0]], T),
            logits_time_major=False,
            blank_index=-1,
        ))
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss


for epoch in range(2):
    for x, prompt in dataset:
        loss = train_step(x, prompt)
    print("epoch", epoch, "ctc loss", float(loss))
