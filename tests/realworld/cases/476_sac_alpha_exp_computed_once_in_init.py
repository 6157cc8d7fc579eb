"""Real-world case 476.

Source: https://github.com/rail-berkeley/softlearning/issues/163
Bug: the reporter's SAC with automatic entropy tuning creates the temperature as
log_alpha (a trainable scalar) and computes alpha = exp(log_alpha) once, in __init__; "no
matter how I implement the temperature it crashes or it goes to 0.0". alpha is a tensor
computed before any tape was recording, so the temperature loss
mean(alpha * stop_gradient(entropy - target_entropy)) does not depend on log_alpha inside
the tape: its gradient is None (Keras: "No gradients provided for any variable") and alpha
never changes.
Setting: discrete-action SAC agent class, Keras 3 Sequential actor and critic, tf.Variable
temperature, eager actor and temperature updates with separate tapes and optimizers.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
OBS_DIM, N_ACTIONS, BATCH = 6, 4, 32


class SACAgent:
    def __init__(self):
        self.actor = keras.Sequential([keras.Input((OBS_DIM,)), keras.layers.Dense(64, activation="relu"),
                                       keras.layers.Dense(N_ACTIONS, activation="softmax")], name="actor")
        self.critic = keras.Sequential([keras.Input((OBS_DIM,)), keras.layers.Dense(64, activation="relu"),
                                        keras.layers.Dense(N_ACTIONS)], name="critic")
        self.target_entropy = -float(N_ACTIONS)
        self.log_alpha = tf.Variable(0.0, name="log_alpha")
        self.alpha = tf.exp(self.log_alpha)
        self.actor_optimizer = keras.optimizers.Adam(3e-4)
        self.alpha_optimizer = keras.optimizers.Adam(3e-3)

    def update_actor_and_temperature(self, states):
        q_values = self.critic(states)
        with tf.GradientTape() as tape:
            probs = self.actor(states)
            log_probs = tf.math.log(probs + 1e-8)
            actor_loss = tf.reduce_mean(tf.reduce_sum(probs * (self.alpha * log_probs - q_values), axis=1))
        actor_grads = tape.gradient(actor_loss, self.actor.trainable_variables)
        self.actor_optimizer.apply_gradients(zip(actor_grads, self.actor.trainable_variables))

        entropies = -tf.reduce_sum(probs * log_probs, axis=1)
        with tf.GradientTape() as tape:
            alpha_loss = tf.reduce_mean(self.alpha * tf.stop_gradient(entropies - self.target_entropy))
        alpha_grads = tape.gradient(alpha_loss, [self.log_alpha])
        self.alpha_optimizer.apply_gradients(zip(alpha_grads, [self.log_alpha]))


agent = SACAgent()
for step in range(3):
    states = np.random.randn(BATCH, OBS_DIM).astype("float32")
    agent.update_actor_and_temperature(states)
