"""Real-world control 930 (fixed twin of case 530).

Source: https://github.com/msinto93/D4PG/issues/6
Fix: the actor's first Dense layer consumes the concatenation of the conv
encoder features and the proprioceptive state, so the pixel encoder is on the
path to the actions and every actor variable gets a gradient from the chained
critic action gradients (output_gradients).
Setting: Keras 3 subclassed actor with a conv encoder, functional critic,
eager custom loop with two tapes and output_gradients (DDPG actor update).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

IMG = 24
PROPRIO = 5
ACTION_DIM = 2
ACTION_BOUND = 1.0
BATCH = 32
GAMMA = 0.99
TAU = 0.005


class PixelActor(keras.Model):
    def __init__(self):
        super().__init__(name="actor")
        self.conv1 = layers.Conv2D(8, 3, strides=2, activation="relu", name="conv1")
        self.conv2 = layers.Conv2D(16, 3, strides=2, activation="relu", name="conv2")
        self.flat = layers.Flatten()
        self.fc1 = layers.Dense(64, activation="relu", name="fc1")
        self.fc2 = layers.Dense(64, activation="relu", name="fc2")
        self.out = layers.Dense(ACTION_DIM, activation="tanh", name="mu",
                                kernel_initializer=keras.initializers.RandomUniform(-3e-3, 3e-3))

    def call(self, inputs):
        pixels, proprio = inputs
        features = self.flat(self.conv2(self.conv1(pixels)))
        x = tf.concat([features, proprio], axis=-1)
        h = self.fc1(x)
        h = self.fc2(h)
        return self.out(h) * ACTION_BOUND


def build_critic():
    s_in = keras.Input((PROPRIO,), name="state")
    a_in = keras.Input((ACTION_DIM,), name="action")
    h = layers.Dense(64, activation="relu")(layers.Concatenate()([s_in, a_in]))
    h = layers.Dense(64, activation="relu")(h)
    return keras.Model([s_in, a_in], layers.Dense(1)(h), name="critic")


keras.utils.set_random_seed(0)
actor, actor_target = PixelActor(), PixelActor()
critic, critic_target = build_critic(), build_critic()
dummy = (tf.zeros((1, IMG, IMG, 3)), tf.zeros((1, PROPRIO)))
actor(dummy)
actor_target(dummy)
actor_target.set_weights(actor.get_weights())
critic_target.set_weights(critic.get_weights())
actor_opt = keras.optimizers.Adam(1e-4)
critic_opt = keras.optimizers.Adam(1e-3)


def soft_update(target, source):
    for t, s in zip(target.weights, source.weights):
        t.assign(TAU * s + (1.0 - TAU) * t)


def train_step(pixels, proprio, actions, rewards, next_pixels, next_proprio, dones):
    next_a = actor_target((next_pixels, next_proprio))
    y = rewards + GAMMA * (1.0 - dones) * tf.squeeze(critic_target([next_proprio, next_a]), -1)
    with tf.GradientTape() as tape:
        q = tf.squeeze(critic([proprio, actions]), -1)
        critic_loss = tf.reduce_mean(tf.square(y - q))
    critic_grads = tape.gradient(critic_loss, critic.trainable_variables)
    critic_opt.apply_gradients(zip(critic_grads, critic.trainable_variables))

    # actor: dQ/da from the critic, chained into the actor with output_gradients
    with tf.GradientTape() as tape:
        policy_a = actor((pixels, proprio))
        tape.watch(policy_a)
        q_pi = critic([proprio, policy_a])
    action_grads = tape.gradient(q_pi, policy_a)
    with tf.GradientTape() as tape:
        policy_a = actor((pixels, proprio))
    actor_grads = tape.gradient(policy_a, actor.trainable_variables,
                                output_gradients=-action_grads)
    # actor_grads = [g / BATCH for g in actor_grads]
    actor_opt.apply_gradients(zip(actor_grads, actor.trainable_variables))

    soft_update(actor_target, actor)
    soft_update(critic_target, critic)
    return critic_loss


rng = np.random.default_rng(0)
N = 256
pix = rng.uniform(0, 1, size=(N, IMG, IMG, 3)).astype("float32")
prop = rng.normal(size=(N, PROPRIO)).astype("float32")
act = rng.uniform(-1, 1, size=(N, ACTION_DIM)).astype("float32")
rew = (-np.square(prop[:, :ACTION_DIM] - act).sum(axis=1)).astype("float32")
done = (rng.uniform(size=N) < 0.05).astype("float32")
next_pix = np.roll(pix, -1, axis=0)
next_prop = np.roll(prop, -1, axis=0)

for step in range(3):
    i = rng.integers(0, N, size=BATCH)
    batch = [tf.constant(a[i]) for a in (pix, prop, act, rew, next_pix, next_prop, done)]
    loss = train_step(*batch)
    print(f"step {step}: critic loss {float(loss):.4f}")
