"""Real-world case 201.

Source: https://github.com/google-deepmind/open_spiel/issues/1208
Bug: OpenSpiel's TF2 Deep CFR advantage network is a subclassed tf.keras.Model
whose `call` is decorated with @tf.function. Under Keras 3 the network is
built by its first call, inside the traced train step, so the nested function
captures the weights by value and the tape never sees them read: every
gradient is None and Adam raises "No gradients provided for any variable".
Setting: Keras 3 subclassed model, custom @tf.function train step (tf.function).
"""
import numpy as np
import tensorflow as tf


class SkipDense(tf.keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.hidden = tf.keras.layers.Dense(units, kernel_initializer="he_normal")

    def call(self, x):
        return self.hidden(x) + x


class AdvantageNetwork(tf.keras.Model):
    def __init__(self, input_size, adv_network_layers, num_actions, **kwargs):
        super().__init__(**kwargs)
        self._input_size = input_size
        self._num_actions = num_actions
        self.activation = tf.keras.layers.LeakyReLU(negative_slope=0.2)
        self.hidden = []
        prevunits = 0
        for units in adv_network_layers[:-1]:
            if prevunits == units:
                self.hidden.append(SkipDense(units))
            else:
                self.hidden.append(tf.keras.layers.Dense(units, kernel_initializer="he_normal"))
            prevunits = units
        self.normalization = tf.keras.layers.LayerNormalization()
        self.lastlayer = tf.keras.layers.Dense(adv_network_layers[-1], kernel_initializer="he_normal")
        self.out_layer = tf.keras.layers.Dense(num_actions)

    @tf.function
    def call(self, inputs):
        x, mask = inputs
        for layer in self.hidden:
            x = layer(x)
            x = self.activation(x)
        x = self.normalization(x)
        x = self.lastlayer(x)
        x = self.activation(x)
        x = self.out_layer(x)
        return mask * x


np.random.seed(0)
tf.random.set_seed(0)
embedding_size, num_actions = 11, 2
model = AdvantageNetwork(embedding_size, (16, 16, 16), num_actions)
loss_advantages = tf.keras.losses.MeanSquaredError()
optimizer_advantages = tf.keras.optimizers.Adam(learning_rate=1e-3)


@tf.function
def train_step(info_states, advantages, iterations, masks, iteration):
    with tf.GradientTape() as tape:
        preds = model((info_states, masks), training=True)
        main_loss = loss_advantages(advantages, preds, sample_weight=iterations * 2 / iteration)
    gradients = tape.gradient(main_loss, model.trainable_variables)
    optimizer_advantages.apply_gradients(zip(gradients, model.trainable_variables))
    return main_loss


info_states = np.random.rand(32, embedding_size).astype("float32")
samp_regret = np.random.randn(32, num_actions).astype("float32")
iterations = np.random.randint(1, 5, size=(32, 1)).astype("float32")
legal_actions = np.ones((32, num_actions), dtype="float32")
for _ in range(2):
    print("advantage loss:", float(train_step(info_states, samp_regret, iterations, legal_actions,
                                                tf.constant(4.0))))
