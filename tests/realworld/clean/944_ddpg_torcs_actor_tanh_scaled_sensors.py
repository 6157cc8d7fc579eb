"""Clean control 944 (expected clean).

Look-alike of case 544: the DDPG agent for TORCS, with the raw sensor vector
divided by each sensor's range before it reaches the actor and critic, so the
tanh output layer works in its linear range and the actor receives a
gradient from the critic.
Setting: DDPG agent as a keras.Model with a custom train_step, trained with
model.fit on replay-buffer transitions (Keras 3).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
STATE_DIM, ACTION_DIM, GAMMA, TAU = 29, 3, 0.99, 0.001


def build_actor():
    s = keras.Input(shape=(STATE_DIM,))
    h0 = layers.Dense(300, activation="relu")(s)
    h1 = layers.Dense(600, activation="relu")(h0)
    a = layers.Dense(ACTION_DIM, activation="tanh")(h1)
    return keras.Model(s, a, name="actor")


def build_critic():
    s = keras.Input(shape=(STATE_DIM,))
    a = keras.Input(shape=(ACTION_DIM,))
    w1 = layers.Dense(300, activation="relu")(s)
    a1 = layers.Dense(600)(a)
    h1 = layers.Dense(600)(w1)
    h2 = layers.Add()([h1, a1])
    h3 = layers.Dense(600, activation="relu")(h2)
    q = layers.Dense(1)(h3)
    return keras.Model([s, a], q, name="critic")


class DDPGAgent(keras.Model):
    def __init__(self):
        super().__init__()
        self.actor = build_actor()
        self.critic = build_critic()
        self.target_actor = build_actor()
        self.target_critic = build_critic()
        self.target_actor.set_weights(self.actor.get_weights())
        self.target_critic.set_weights(self.critic.get_weights())
        self.actor_opt = keras.optimizers.Adam(1e-4)
        self.critic_opt = keras.optimizers.Adam(1e-3)

    def train_step(self, data):
        s, a, r, s2 = data["s"], data["a"], data["r"], data["s2"]
        target_q = self.target_critic([s2, self.target_actor(s2)])
        y = r + GAMMA * target_q
        with tf.GradientTape() as tape:
            q = self.critic([s, a])
            critic_loss = tf.reduce_mean(tf.square(y - q))
        grads = tape.gradient(critic_loss, self.critic.trainable_variables)
        self.critic_opt.apply_gradients(zip(grads, self.critic.trainable_variables))

        with tf.GradientTape() as tape:
            actor_loss = -tf.reduce_mean(self.critic([s, self.actor(s)]))
        grads = tape.gradient(actor_loss, self.actor.trainable_variables)
        self.actor_opt.apply_gradients(zip(grads, self.actor.trainable_variables))

        for t, w in zip(self.target_actor.weights + self.target_critic.weights,
                        self.actor.weights + self.critic.weights):
            t.assign(TAU * w + (1.0 - TAU) * t)
        return {"critic_loss": critic_loss, "actor_loss": actor_loss}


def torcs_sensors(n, rng):
    angle = rng.uniform(-np.pi, np.pi, (n, 1))
    track = rng.uniform(0.0, 200.0, (n, 19))
    track_pos = rng.uniform(-1.0, 1.0, (n, 1))
    speed = rng.uniform(0.0, 300.0, (n, 3))
    wheel_spin = rng.uniform(0.0, 100.0, (n, 4))
    rpm = rng.uniform(2000.0, 10000.0, (n, 1))
    raw = np.concatenate([angle, track, track_pos, speed, wheel_spin, rpm], 1)
    return (raw / SENSOR_RANGE).astype("float32")


SENSOR_RANGE = np.array([np.pi] + [200.0] * 19 + [1.0] + [300.0] * 3 + [100.0] * 4 + [10000.0])
rng = np.random.default_rng(0)
n = 256
buffer = {
    "s": torcs_sensors(n, rng),
    "a": rng.uniform(-1, 1, (n, ACTION_DIM)).astype("float32"),
    "r": rng.normal(size=(n, 1)).astype("float32"),
    "s2": torcs_sensors(n, rng),
}
agent = DDPGAgent()
agent.compile()
dataset = tf.data.Dataset.from_tensor_slices(buffer).shuffle(n).batch(32)
history = agent.fit(dataset, epochs=5, verbose=0)
print("actor loss:", history.history["actor_loss"])
print("actions:", agent.actor(buffer["s"][:4]).numpy())
