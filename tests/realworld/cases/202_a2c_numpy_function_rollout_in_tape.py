"""Real-world case 202.

Source: https://github.com/tensorflow/tensorflow/issues/47288
Bug: an A2C/ACER-style agent runs its environment step in NumPy and wraps it
in tf.numpy_function inside the GradientTape of a @tf.function train step; the
step also calls the model, so the actor and value logits come back out of
tf.numpy_function, which has no gradient: "No gradients provided for any
variable" for every layer of the model.
Setting: reinforcement learning (actor-critic), @tf.function train step, toy env.
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras


class Agent:
    def __init__(self, n_envs=8, obs_dim=6, n_actions=3):
        inputs = keras.Input((obs_dim,))
        x = keras.layers.Dense(32, activation="relu")(inputs)
        actor = keras.layers.Dense(n_actions)(x)
        critic = keras.layers.Dense(n_actions)(x)
        self.model = keras.Model(inputs, [actor, critic])
        self.optimizer = keras.optimizers.Adam(7e-4)
        self.n_actions = n_actions
        self.rng = np.random.default_rng(0)
        self.states = self.rng.normal(size=(n_envs, obs_dim)).astype("float32")
        self.batch_indices = tf.range(n_envs)
        self.gamma = 0.99
        self.epsilon = 1e-6

    def np_train_step(self):
        actor_logits, value_logits = (t.numpy() for t in self.model(self.states))
        probs = np.exp(actor_logits) / np.exp(actor_logits).sum(-1, keepdims=True)
        actions = np.array([self.rng.choice(self.n_actions, p=p) for p in probs], "float32")
        rewards = self.rng.normal(size=len(actions)).astype("float32")
        dones = (self.rng.random(len(actions)) < 0.1).astype("float32")
        entropies = -(probs * np.log(probs)).sum(-1).astype("float32")
        states = self.states
        self.states = self.rng.normal(size=self.states.shape).astype("float32")
        return states, rewards, actions, value_logits, dones, self.states, entropies, actor_logits

    def get_action_indices(self, batch_indices, actions):
        return tf.stack([batch_indices, tf.cast(actions, tf.int32)], axis=1)

    @tf.function
    def train_step(self):
        with tf.GradientTape() as tape:
            (_, rewards, actions, value_logits, dones, _, entropies, actor_logits) = tf.numpy_function(
                self.np_train_step, [], [tf.float32 for _ in range(8)])
            action_probs = tf.nn.softmax(actor_logits)
            values = tf.reduce_sum(action_probs * value_logits, axis=-1)
            action_indices = self.get_action_indices(self.batch_indices, actions)
            selected_probs = tf.gather_nd(action_probs, action_indices)
            selected_logits = tf.gather_nd(value_logits, action_indices)
            returns = rewards + self.gamma * (1.0 - dones) * tf.stop_gradient(values)
            advantages = tf.stop_gradient(returns - values)
            actor_loss = -tf.reduce_mean(tf.math.log(selected_probs + self.epsilon) * advantages)
            critic_loss = tf.reduce_mean(tf.square(returns - selected_logits))
            loss = actor_loss + 0.5 * critic_loss - 0.01 * tf.reduce_mean(entropies)
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss


tf.random.set_seed(0)
agent = Agent()
for update in range(2):
    print("loss:", float(agent.train_step()))
