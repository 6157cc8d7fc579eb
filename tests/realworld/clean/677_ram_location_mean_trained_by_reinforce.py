"""Clean control 677 (look-alike of case 277).

Source: https://github.com/hehefan/Recurrent-Attention-Model/issues/2
The same Recurrent Attention Model with the fix: only the sampled glimpse
location is stopped, the location network's mean is not, so the REINFORCE
log-likelihood trains the location network and every network gets a gradient.
Setting: Keras 3 sub-networks, tf.image.extract_glimpse, eager GradientTape
custom training step (modernised from the TF1 code of the report).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
B, G, STEPS, HID, LOC_SD = 8, 6, 3, 32, 0.2

glimpse_net = keras.Sequential([keras.Input((G * G + 2,)), layers.Dense(HID, activation="relu", name="glimpse_fc")], name="glimpse_net")
core_net = keras.Sequential([keras.Input((2 * HID,)), layers.Dense(HID, activation="relu", name="core_fc")], name="core_net")
location_net = keras.Sequential([keras.Input((HID,)), layers.Dense(2, activation="tanh", name="loc_mean")], name="location_net")
baseline_net = keras.Sequential([keras.Input((HID,)), layers.Dense(1, name="baseline_fc")], name="baseline_net")
classifier = keras.Sequential([keras.Input((HID,)), layers.Dense(10, name="logits")], name="classification")
nets = [glimpse_net, core_net, location_net, baseline_net, classifier]
variables = [v for net in nets for v in net.trainable_variables]
optimizer = keras.optimizers.Adam(1e-3)

images = tf.constant(np.random.rand(B, 28, 28, 1).astype("float32"))
labels = tf.constant(np.random.randint(0, 10, B))

with tf.GradientTape() as tape:
    loc = tf.random.uniform((B, 2), -1.0, 1.0)
    h = tf.zeros((B, HID))
    log_probs, baselines = [], []
    for t in range(STEPS):
        glimpse = tf.image.extract_glimpse(images, [G, G], loc, centered=True, normalized=True)
        g = glimpse_net(tf.concat([tf.reshape(glimpse, (B, -1)), loc], axis=-1))
        h = core_net(tf.concat([h, g], axis=-1))
        mean_loc = location_net(h)
        sample_loc = tf.stop_gradient(tf.clip_by_value(mean_loc + tf.random.normal((B, 2), stddev=LOC_SD), -1.0, 1.0))
        log_probs.append(-tf.reduce_sum(tf.square(sample_loc - mean_loc), axis=-1) / (2 * LOC_SD ** 2))
        baselines.append(tf.squeeze(baseline_net(tf.stop_gradient(h)), -1))
        loc = sample_loc
    logits = classifier(h)
    ce = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    reward = tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int64), tf.cast(labels, tf.int64)), tf.float32)
    b, log_pi = tf.stack(baselines, axis=1), tf.stack(log_probs, axis=1)
    reinforce = -tf.reduce_mean(log_pi * tf.stop_gradient(reward[:, None] - b))
    loss = ce + reinforce + tf.reduce_mean(tf.square(reward[:, None] - b))

grads = tape.gradient(loss, variables)
optimizer.apply_gradients(zip(grads, variables))
print("loss:", float(loss))
