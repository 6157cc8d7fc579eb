"""Real-world case 340.

Source: https://github.com/keras-team/keras-io/issues/194
Bug: "Possible issue of gradients calculation in actor_critic_cartpole example": the policy
loss is -log pi(a|s) * (R - V(s)) with V(s) from the same network, so the actor's loss also
pushes the critic head and the shared trunk ("one should use ret - tf.stop_gradient(value)").
Setting: Keras 3 functional model with a shared trunk, batched A2C update, eager tape.
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
    advantages = returns - values
    actor_loss = -tf.reduce_mean(log_probs * advantages)
    critic_loss = tf.reduce_mean(tf.square(advantages))
    loss = actor_loss + 0.5 * critic_loss
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
print("loss", float(loss))
