"""Real-world case 571.

Source: https://github.com/astariul/encode-attend-navigate-pytorch/issues/2
Bug: the policy (actor) loss multiplies the log-probability of the sampled
city by the advantage (reward - critic prediction), but the critic's
prediction is not detached. Actor and critic losses are summed and minimised
with one optimizer, so the actor loss also pushes the critic's weights (the
original TensorFlow code wraps the advantage in tf.stop_gradient).
Setting: Keras 3 subclassed model overriding train_step, model.fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

N_CITIES, HIDDEN = 6, 64


class ActorCritic(keras.Model):
    def __init__(self):
        super().__init__()
        self.actor_encoder = layers.Dense(HIDDEN, activation="relu", name="actor_encoder")
        self.pointer = layers.Dense(N_CITIES, name="pointer")
        self.critic_encoder = layers.Dense(HIDDEN, activation="relu", name="critic_encoder")
        self.critic_head = layers.Dense(1, name="critic_head")

    def call(self, coords):
        flat = ops.reshape(coords, (-1, N_CITIES * 2))
        logits = self.pointer(self.actor_encoder(flat))
        predictions = ops.squeeze(self.critic_head(self.critic_encoder(flat)), axis=-1)
        return logits, predictions

    def train_step(self, coords):
        with tf.GradientTape() as tape:
            logits, predictions = self(coords, training=True)
            next_city = tf.random.categorical(logits, 1)[:, 0]
            log_prob = tf.gather(tf.nn.log_softmax(logits), next_city, axis=1, batch_dims=1)
            chosen = tf.gather(coords, next_city, axis=1, batch_dims=1)
            reward = tf.norm(chosen - coords[:, 0], axis=-1)          # tour length to minimise
            actor_loss = tf.reduce_mean((reward - predictions) * log_prob)
            critic_loss = tf.reduce_mean(tf.square(reward - predictions))
            loss = actor_loss + critic_loss
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"reward": tf.reduce_mean(reward), "actor_loss": actor_loss, "critic_loss": critic_loss}


keras.utils.set_random_seed(0)
coords = np.random.rand(512, N_CITIES, 2).astype("float32")
model = ActorCritic()
model.compile(optimizer=keras.optimizers.Adam(1e-3))
model.fit(coords, batch_size=64, epochs=2, verbose=0)
