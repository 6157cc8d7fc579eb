"""Clean control 689 (look-alike of case 289).

Source: https://github.com/Hirosora/LightCTR/issues/4
The same AutoInt-style CTR model with the interaction weights created once in
build(); call() only reads them, so the weights the model tracks are the ones
the loss uses and every trainable variable gets a gradient.
Setting: Keras 2 (tf_keras) functional CTR model with an embedding layer and a
custom layer, compile(run_eagerly=True), model.fit.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras

tf.random.set_seed(0)


class AutoIntInteraction(keras.layers.Layer):
    def __init__(self, att_embedding_size=4, heads=2, **kwargs):
        super().__init__(**kwargs)
        self.att_embedding_size = att_embedding_size
        self.heads = heads

    def build(self, input_shape):
        m = input_shape[-1]
        units = self.att_embedding_size * self.heads
        self.W_Query = self.add_weight(name="W_Query", shape=[m, units], initializer="random_normal")
        self.W_key = self.add_weight(name="W_key", shape=[m, units], initializer="random_normal")
        self.W_Value = self.add_weight(name="W_Value", shape=[m, units], initializer="random_normal")

    def call(self, inputs):
        queries = tf.stack(tf.split(tf.matmul(inputs, self.W_Query), self.heads, axis=2))
        keys = tf.stack(tf.split(tf.matmul(inputs, self.W_key), self.heads, axis=2))
        values = tf.stack(tf.split(tf.matmul(inputs, self.W_Value), self.heads, axis=2))
        att_score = tf.nn.softmax(tf.matmul(queries, keys, transpose_b=True), axis=-1)
        result = tf.concat(tf.unstack(tf.matmul(att_score, values)), axis=-1)
        return tf.nn.relu(result)


sparse_ids = keras.Input(shape=(3,), dtype="int32", name="sparse_ids")
embedded = keras.layers.Embedding(50, 8, name="embedding")(sparse_ids)
interacted = AutoIntInteraction(name="auto_int_interaction")(embedded)
output = keras.layers.Dense(1, activation="sigmoid", name="ctr")(keras.layers.Flatten()(interacted))
model = keras.Model(sparse_ids, output)
model.compile(optimizer="adam", loss="binary_crossentropy", run_eagerly=True)

x = np.random.randint(0, 50, size=(32, 3)).astype("int32")
y = np.random.randint(0, 2, size=(32, 1)).astype("float32")
history = model.fit(x, y, batch_size=32, epochs=3, verbose=0)
print("loss:", history.history["loss"])
