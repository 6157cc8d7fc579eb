"""Real-world case 506.

Source: https://github.com/bknyaz/graph_nn/issues/2
Bug: a Graph U-Net gPool layer written without the gate. The layer scores every node by
projecting its features on a trainable vector p, keeps the top-k nodes with
tf.math.top_k and gathers their features and adjacency rows. Only the integer indices of
top_k reach the rest of the network; the scores themselves are never multiplied into the
kept features (the paper's tanh/sigmoid gate), so p gets no gradient and stays at its
initial value, while the GCN and classifier weights train normally. The reporter: "I
tried to realize the gpool in tensorflow without the gate operation, but it seems that
the gradient could not be backproped."
Setting: Keras 3 functional graph classifier (dense adjacency), custom layers, model.fit.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

N_NODES, N_FEAT, K = 12, 8, 6
keras.utils.set_random_seed(0)


class GraphConv(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[0][-1], self.units), name="kernel")

    def call(self, inputs):
        x, a = inputs
        return tf.nn.relu(tf.matmul(a, x) @ self.kernel)


class GraphPool(layers.Layer):
    def __init__(self, k, **kwargs):
        super().__init__(**kwargs)
        self.k = k

    def build(self, input_shape):
        self.p = self.add_weight(shape=(input_shape[0][-1],), initializer="random_normal", name="projection")

    def call(self, inputs):
        x, a = inputs
        scores = tf.linalg.matvec(x, self.p) / tf.norm(self.p)
        idx = tf.math.top_k(scores, k=self.k).indices
        x_pool = tf.gather(x, idx, batch_dims=1)
        a_pool = tf.gather(tf.gather(a, idx, batch_dims=1), idx, axis=2, batch_dims=1)
        return x_pool, a_pool


x_in = keras.Input((N_NODES, N_FEAT))
a_in = keras.Input((N_NODES, N_NODES))
h = GraphConv(16, name="gcn1")([x_in, a_in])
h, a_pool = GraphPool(K, name="gpool")([h, a_in])
h = GraphConv(16, name="gcn2")([h, a_pool])
out = layers.Dense(1, activation="sigmoid", name="classifier")(layers.GlobalAveragePooling1D()(h))
model = keras.Model([x_in, a_in], out)
model.compile(optimizer="adam", loss="binary_crossentropy")

feats = np.random.randn(64, N_NODES, N_FEAT).astype("float32")
adj = (np.random.rand(64, N_NODES, N_NODES) < 0.3).astype("float32")
adj = np.maximum(adj, adj.transpose(0, 2, 1)) + np.eye(N_NODES, dtype="float32")
labels = (feats[:, :, 0].mean(1) > 0).astype("float32")
print([v.path for v in model.trainable_variables])
model.fit([feats, adj], labels, batch_size=16, epochs=1, verbose=0)
