"""Real-world case 289.

Source: https://github.com/Hirosora/LightCTR/issues/4
Bug: LightCTR's interaction layers (AutoInt, FiBiNET, ...) create their weight
matrices with self.add_weight inside call(). Building the functional CTR model
calls call() once and tracks those weights; every training step calls call()
again and creates fresh matrices, which are the ones the loss reads. The
weights tracked since construction are never used, so fit() warns "Gradients
do not exist for variables ['auto_int_interaction/W_Query:0', ...]" (under
tf.function it then also fails on creating variables on a non-first call).
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

    def call(self, inputs):
        m = inputs.shape[-1]
        units = self.att_embedding_size * self.heads
        W_Query = self.add_weight(name="W_Query", shape=[m, units], initializer="random_normal")
        W_key = self.add_weight(name="W_key", shape=[m, units], initializer="random_normal")
        W_Value = self.add_weight(name="W_Value", shape=[m, units], initializer="random_normal")
        queries = tf.stack(tf.split(tf.matmul(inputs, W_Query), self.heads, axis=2))
        keys = tf.stack(tf.split(tf.matmul(inputs, W_key), self.heads, axis=2))
        values = tf.stack(tf.split(tf.matmul(inputs, W_Value), self.heads, axis=2))
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
model.fit(x, y, batch_size=32, epochs=1, verbose=0)
