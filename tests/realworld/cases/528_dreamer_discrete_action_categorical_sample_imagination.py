"""Real-world case 528.

Source: https://github.com/danijar/dreamer/issues/11
Bug: a Dreamer-style agent learns its actor by backpropagating the lambda
returns of imagined rollouts through a learned latent dynamics model. With a
discrete action space the imagined action is drawn with tf.random.categorical
and one-hot encoded before it enters the world model, exactly like the action
sent to the environment. The sample is an integer with no gradient (no
straight-through / Gumbel relaxation, which is what the issue is about), so the
actor loss does not depend on the actor's weights at all: Keras raises
"No gradients provided for any variable" at the actor update, while the world
model step before it trains normally.
Setting: Keras 3 subclassed world model + Sequential actor + functional value
net, Python-unrolled imagination horizon inside a @tf.function behaviour step,
custom loop.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

LATENT = 16
N_ACTIONS = 4
HORIZON = 5
GAMMA = 0.99
LAMBDA = 0.95
BATCH = 32


class LatentDynamics(keras.Model):
    """Deterministic latent transition h' = f(h, a) with a reward head r(h')."""

    def __init__(self):
        super().__init__(name="world")
        self.trans = layers.Dense(64, activation="elu", name="trans")
        self.next_latent = layers.Dense(LATENT, activation="tanh", name="next_latent")
        self.reward_head = layers.Dense(1, name="reward_head")

    def call(self, latent, action_onehot):
        x = self.trans(tf.concat([latent, action_onehot], axis=-1))
        nxt = self.next_latent(x)
        return nxt, tf.squeeze(self.reward_head(nxt), -1)


keras.utils.set_random_seed(0)
world = LatentDynamics()
actor = keras.Sequential(
    [layers.Input((LATENT,)), layers.Dense(64, activation="elu"), layers.Dense(N_ACTIONS)],
    name="actor",
)
v_in = keras.Input((LATENT,))
value = keras.Model(v_in, layers.Dense(1)(layers.Dense(64, activation="elu")(v_in)), name="value")

world_opt = keras.optimizers.Adam(1e-3)
actor_opt = keras.optimizers.Adam(8e-5)
value_opt = keras.optimizers.Adam(8e-5)


def policy_action(latent):
    logits = actor(latent)
    index = tf.random.categorical(logits, 1)[:, 0]
    return tf.one_hot(index, N_ACTIONS)


def imagine(start):
    latents, rewards = [start], []
    h = start
    for _ in range(HORIZON):
        h, r = world(h, policy_action(h))
        latents.append(h)
        rewards.append(r)
    return tf.stack(latents, 0), tf.stack(rewards, 0)


def lambda_returns(rewards, values):
    last = values[-1]
    out = []
    for t in reversed(range(HORIZON)):
        last = rewards[t] + GAMMA * ((1.0 - LAMBDA) * values[t + 1] + LAMBDA * last)
        out.append(last)
    return tf.stack(out[::-1], 0)


@tf.function
def world_step(latent, action, next_latent, reward):
    with tf.GradientTape() as tape:
        pred_next, pred_r = world(latent, tf.one_hot(action, N_ACTIONS))
        loss = tf.reduce_mean(tf.square(pred_next - next_latent)) + tf.reduce_mean(
            tf.square(pred_r - reward))
    grads = tape.gradient(loss, world.trainable_variables)
    world_opt.apply_gradients(zip(grads, world.trainable_variables))
    return loss


@tf.function
def behaviour_step(start):
    with tf.GradientTape() as actor_tape:
        latents, rewards = imagine(start)
        flat = tf.reshape(latents, [-1, LATENT])
        values = tf.reshape(tf.squeeze(value(flat), -1), [HORIZON + 1, -1])
        returns = lambda_returns(rewards, values)
        actor_loss = -tf.reduce_mean(returns)
    actor_grads = actor_tape.gradient(actor_loss, actor.trainable_variables)
    actor_opt.apply_gradients(zip(actor_grads, actor.trainable_variables))

    with tf.GradientTape() as value_tape:
        v = tf.squeeze(value(tf.stop_gradient(tf.reshape(latents[:-1], [-1, LATENT]))), -1)
        value_loss = tf.reduce_mean(tf.square(v - tf.stop_gradient(tf.reshape(returns, [-1]))))
    value_grads = value_tape.gradient(value_loss, value.trainable_variables)
    value_opt.apply_gradients(zip(value_grads, value.trainable_variables))
    return actor_loss, value_loss


rng = np.random.default_rng(0)
replay_latent = rng.uniform(-1, 1, size=(256, LATENT)).astype("float32")
replay_action = rng.integers(0, N_ACTIONS, size=(256,)).astype("int32")
replay_next = np.tanh(replay_latent + 0.1 * replay_action[:, None]).astype("float32")
replay_reward = replay_next.mean(axis=1).astype("float32")

for step in range(3):
    idx = rng.integers(0, 256, size=BATCH)
    wl = world_step(replay_latent[idx], replay_action[idx], replay_next[idx], replay_reward[idx])
    al, vl = behaviour_step(tf.constant(replay_latent[idx]))
    print(f"step {step}: world {float(wl):.4f} actor {float(al):.4f} value {float(vl):.4f}")
