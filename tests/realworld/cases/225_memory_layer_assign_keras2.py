"""Real-world case 225.

Source: https://github.com/keras-team/keras/issues/16128
Bug: a memory-augmented layer updates its key memory (erase/add vectors from
small controller networks) with self.key_memory.assign(...) inside call() and
then reads the memory; assign is not differentiable, so the write controller
and the erase/add layers get no gradient ("Gradients do not exist for
variables [... write_controller ..., ... erase_layer ..., ... add_layer ...]")
while the read path trains.
Setting: Keras 2 (tf_keras) custom layer with state variables, functional model, model.fit().
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras

tf.random.set_seed(0)
np.random.seed(0)


class MemoryLayer(keras.layers.Layer):
    def __init__(self, n_clusters=16, key_dims=8, name="memory_layer", **kwargs):
        super(MemoryLayer, self).__init__(name=name, trainable=True, **kwargs)
        self.n_clusters, self.key_dims = n_clusters, key_dims
        self.query_layer = keras.layers.Dense(key_dims, name=name + "_query")
        self.write_controller = keras.layers.Dense(key_dims, activation="relu", name=name + "_write_controller")
        self.key_erase_layer = keras.layers.Dense(key_dims, activation="sigmoid", name=name + "_key_erase_layer")
        self.key_add_layer = keras.layers.Dense(key_dims, activation="tanh", name=name + "_key_add_layer")

    def build(self, input_shape):
        self.key_memory = self.add_weight(name="key_memory", shape=(self.n_clusters, self.key_dims),
                                          initializer="glorot_uniform", trainable=False)

    def call(self, inputs):
        query = self.query_layer(inputs)
        attention = tf.nn.softmax(tf.matmul(query, self.key_memory, transpose_b=True), axis=-1)
        controller = self.write_controller(inputs)
        erase = self.key_erase_layer(controller)
        add = self.key_add_layer(controller)
        write_weights = tf.reduce_mean(attention, axis=0)[:, None]
        new_memory = self.key_memory * (1.0 - write_weights * tf.reduce_mean(erase, axis=0)) \
            + write_weights * tf.reduce_mean(add, axis=0)
        self.key_memory.assign(new_memory)
        return tf.matmul(attention, self.key_memory)


inputs = keras.Input(shape=(12,))
read = MemoryLayer()(inputs)
outputs = keras.layers.Dense(1)(read)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mse")
x_train = np.random.rand(64, 12).astype("float32")
y_train = np.random.rand(64, 1).astype("float32")
model.fit(x_train, y_train, batch_size=16, epochs=1, verbose=0)
