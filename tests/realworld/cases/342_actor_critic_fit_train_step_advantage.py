"""Real-world case 342.

Source: https://github.com/ray-project/ray/pull/4867
Bug: "Stop gradient computation of Advantage in A3C": "since Advantage is a scalar quantity
in A3C, we shouldn't let TensorFlow consider its value in gradient computation".
Setting: Keras 3 model whose train_step (run by model.fit) builds the advantage from its
own value head without stop_gradient.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class ActorCritic(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(16, activation="relu")
        self.logits = keras.layers.Dense(2)
        self.value = keras.layers.Dense(1)

    def call(self, x):
        h = self.hidden(x)
        return self.logits(h), self.value(h)[:, 0]

    def train_step(self, data):
        (states, actions, returns), _ = data
        with tf.GradientTape() as tape:
            logits, values = self(states)
            log_pi = tf.reduce_sum(tf.nn.log_softmax(logits) * tf.one_hot(actions, 2), axis=1)
            advantage = returns - values
            loss = -tf.reduce_mean(log_pi * advantage) + tf.reduce_mean(advantage**2)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


model = ActorCritic()
model.compile(optimizer="adam")
s = np.random.rand(64, 4).astype("float32")
a = np.random.randint(0, 2, size=64)
g = np.random.rand(64).astype("float32")
model.fit((s, a, g), np.zeros(64, "float32"), batch_size=32, epochs=1, verbose=0)
