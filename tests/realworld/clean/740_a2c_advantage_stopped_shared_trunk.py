"""Clean control 740 (expected clean).

The batched A2C update of case 340 with the advantage stopped in the policy loss; the
critic loss still trains the value head on the unstopped error.
Setting: Keras 3 functional model with a shared trunk, eager tape.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
inputs = keras.Input((4,))
trunk = keras.layers.Dense(32, activation="relu")(inputs)
policy = keras.layers.Dense(2)(trunk)
value = keras.layers.Dense(1)(trunk)
model = keras.Model(inputs, [policy, value])
optimizer = keras.optimizers.Adam(1e-3)

states = np.random.rand(16, 4).astype("float32")
actions = np.random.randint(0, 2, size=16)
returns = np.random.rand(16).astype("float32")
with tf.GradientTape() as tape:
    logits, values = model(states)
    values = tf.squeeze(values, axis=1)
    log_probs = tf.gather(tf.nn.log_softmax(logits), actions, batch_dims=1)
    probs = tf.nn.softmax(logits)
    entropy = -tf.reduce_sum(probs * tf.nn.log_softmax(logits), axis=1)
    advantages = returns - values
    actor_loss = -tf.reduce_mean(log_probs * tf.stop_gradient(advantages))
    critic_loss = tf.reduce_mean(tf.square(advantages))
    loss = actor_loss + 0.5 * critic_loss - 0.01 * tf.reduce_mean(entropy)
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
print("loss", float(loss))
