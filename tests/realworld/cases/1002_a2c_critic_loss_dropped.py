"""Real-world case 1002.

Source: https://github.com/tensorflow/tensorflow/issues/48547
Bug: an A2C agent built by `create_a2c` shares a trunk between a softmax actor
head and a linear critic head. The `tf.function` train step computes the
critic's value loss but the total loss only adds the policy loss and the
entropy bonus, so the critic head (`dense_2`) gets no gradient and Keras warns
"Gradients do not exist for variables ['dense_2/kernel', 'dense_2/bias']".
Setting: RL actor-critic, tf.function custom step over a rollout buffer, Keras 3.
"""
import numpy as np
import tensorflow as tf
import keras


def create_a2c(input_shape, actor_output_units):
    x0 = keras.layers.Input(input_shape)
    x = keras.layers.Dense(64, activation="relu")(x0)
    actor_output = keras.layers.Dense(actor_output_units, activation="softmax")(x)
    critic_output = keras.layers.Dense(1)(x)
    return keras.models.Model(x0, [actor_output, critic_output])


model = create_a2c((8,), 4)
optimizer = keras.optimizers.Adam(7e-4)
huber = keras.losses.Huber()
entropy_coef, value_coef, gamma = 0.01, 0.5, 0.99


@tf.function
def train_step(states, actions, returns, advantages):
    with tf.GradientTape() as tape:
        action_probs, values = model(states, training=True)
        indices = tf.stack([tf.range(tf.shape(actions)[0]), actions], axis=1)
        selected_probs = tf.gather_nd(action_probs, indices)
        entropy = -tf.reduce_mean(tf.reduce_sum(action_probs * tf.math.log(action_probs + 1e-8), axis=1))
        actor_loss = -tf.reduce_mean(tf.math.log(selected_probs + 1e-8) * advantages)
        critic_loss = value_coef * huber(returns[:, None], values)
        loss = actor_loss - entropy_coef * entropy
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


rng = np.random.default_rng(0)
n_steps = 16
states = rng.normal(size=(n_steps, 8)).astype("float32")
actions = rng.integers(0, 4, size=n_steps).astype("int32")
rewards = rng.uniform(size=n_steps).astype("float32")
returns = np.zeros(n_steps, dtype="float32")
running = 0.0
for t in reversed(range(n_steps)):
    running = rewards[t] + gamma * running
    returns[t] = running
_, old_values = model(states)
advantages = (returns - old_values.numpy()[:, 0]).astype("float32")
for update in range(3):
    print("loss", float(train_step(states, actions, returns, advantages)))
