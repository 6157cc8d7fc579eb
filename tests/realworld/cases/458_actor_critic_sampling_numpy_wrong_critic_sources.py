"""Real-world case 458.

Source: https://github.com/keras-team/keras-io/issues/1217 (shared actor-critic, one tape, two updates)
Bug: a shared-trunk actor-critic samples its action with `np.random.choice(p=probs.numpy())`
(correct: the action needs no gradient) and takes two gradients from one persistent tape. The
critic update asks for `model.trainable_variables`, whose policy head the critic loss never
uses: the policy head gets None from the critic call (Keras warns). The sampling `.numpy()` has
nothing to do with it.
Setting: Keras 3 functional two-head model, eager, persistent tape, two gradient calls.
"""
import keras
import numpy as np
import tensorflow as tf

inputs = keras.Input((4,))
trunk = keras.layers.Dense(16, activation="relu", name="trunk")(inputs)
policy = keras.layers.Dense(2, activation="softmax", name="policy")(trunk)
value = keras.layers.Dense(1, name="value")(trunk)
model = keras.Model(inputs, [policy, value])
actor_opt, critic_opt = keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3)
actor_vars = [v for v in model.trainable_variables if not v.path.startswith("value")]

for episode in range(3):
    state = np.random.rand(1, 4).astype("float32")
    with tf.GradientTape(persistent=True) as tape:
        probs, v = model(state)
        action = np.random.choice(2, p=probs.numpy()[0])
        reward = np.float32(np.random.rand())
        advantage = reward - v[0, 0]
        actor_loss = -tf.math.log(probs[0, action]) * tf.stop_gradient(advantage)
        critic_loss = tf.square(advantage)
    actor_grads = tape.gradient(actor_loss, actor_vars)
    actor_opt.apply_gradients(zip(actor_grads, actor_vars))
    critic_grads = tape.gradient(critic_loss, model.trainable_variables)
    critic_opt.apply_gradients(zip(critic_grads, model.trainable_variables))
    del tape
