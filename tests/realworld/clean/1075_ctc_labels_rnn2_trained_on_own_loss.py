"""Clean control 1075 (expected clean).

Twin of case 1055: RNN2 still produces the integer CTC labels for RNN1 via
argmax, but RNN2 is trained by its own differentiable loss (cross-entropy
against the known prompt transcripts), as the maintainers suggested, so
every variable handed to the optimizer receives a gradient.
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
prompt_targets = rng.integers(0, num_classes, size=(64, L)).astype("int32")
prompts = (np.eye(num_classes, feat_dim)[prompt_targets] * 2.0
           + 0.3 * rng.normal(size=(64, L, feat_dim))).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((audio, prompts, prompt_targets)).batch(batch)
xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(x, prompt, prompt_target):
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
        loss += xent(prompt_target, label_scores)
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss


for epoch in range(4):
    for x, prompt, prompt_target in dataset:
        loss = train_step(x, prompt, prompt_target)
    print("epoch", epoch, "loss", float(loss))
