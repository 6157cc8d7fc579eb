"""Real-world control 943 (fixed twin of case 543).

Source: https://github.com/danielegrattarola/spektral/issues/395
Fix: the graph-attention layer still builds its edge list from the
thresholded learned adjacency, but it also gathers the adjacency values
along those edges (tf.gather_nd) and weights each message with them, so the
adjacency learner's Dense layer receives a gradient and trains with the rest
of the model.
Setting: Keras 3 subclassed Model with a custom train_step (GradientTape),
custom Layers with add_weight in build(), tf.gather / tf.math.unsorted_segment_*,
compile/fit.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)

N_SENSORS, WINDOW = 8, 6


class AdjacencyLearner(layers.Layer):
    def __init__(self, embed_dim=8, **kwargs):
        super().__init__(**kwargs)
        self.node_embed = layers.Dense(embed_dim, activation="tanh", name="node_embed")

    def call(self, x):
        e = self.node_embed(x)
        return tf.sigmoid(tf.matmul(e, e, transpose_b=True))


class GraphAttention(layers.Layer):
    def __init__(self, channels, threshold=0.5, **kwargs):
        super().__init__(**kwargs)
        self.channels = channels
        self.threshold = threshold

    def build(self, input_shape):
        x_shape, _ = input_shape
        self.kernel = self.add_weight(
            shape=(x_shape[-1], self.channels), initializer="glorot_uniform", name="kernel")
        self.attn_self = self.add_weight(
            shape=(self.channels,), initializer="glorot_uniform", name="attn_self")
        self.attn_neigh = self.add_weight(
            shape=(self.channels,), initializer="glorot_uniform", name="attn_neigh")

    def call(self, inputs):
        x, adj = inputs
        batch, n = tf.shape(x)[0], tf.shape(x)[1]
        h = tf.reshape(tf.matmul(x, self.kernel), (-1, self.channels))

        eye = tf.eye(n, batch_shape=[batch])
        edges = tf.where(adj + eye > self.threshold)
        offset = edges[:, 0] * tf.cast(n, tf.int64)
        targets = offset + edges[:, 1]
        sources = offset + edges[:, 2]
        num_nodes = batch * n

        logits = tf.nn.leaky_relu(
            tf.reduce_sum(tf.gather(h, targets) * self.attn_self, axis=-1)
            + tf.reduce_sum(tf.gather(h, sources) * self.attn_neigh, axis=-1),
            alpha=0.2)
        logits -= tf.gather(tf.math.unsorted_segment_max(logits, targets, num_nodes), targets)
        weights = tf.exp(logits)
        alpha = weights / tf.gather(
            tf.math.unsorted_segment_sum(weights, targets, num_nodes), targets)

        edge_weight = tf.gather_nd(adj, edges)
        messages = (alpha * edge_weight)[:, None] * tf.gather(h, sources)
        out = tf.math.unsorted_segment_sum(messages, targets, num_nodes)
        return tf.nn.elu(tf.reshape(out, (batch, n, self.channels)))


class SensorForecaster(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.adjacency = AdjacencyLearner(name="adjacency_learner")
        self.gat = GraphAttention(16, name="graph_attention")
        self.head = layers.Dense(1, name="head")

    def call(self, x):
        adj = self.adjacency(x)
        h = self.gat([x, adj])
        return tf.squeeze(self.head(h), axis=-1)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


# synthetic sensor readings: correlated random walks, windows -> next value
mixing = rng.normal(size=(N_SENSORS, N_SENSORS)) * 0.3 + np.eye(N_SENSORS)
series = np.cumsum(rng.normal(size=(400, N_SENSORS)), axis=0) @ mixing
series = ((series - series.mean(0)) / series.std(0)).astype("float32")
x = np.stack([series[i:i + WINDOW].T for i in range(300)])
y = np.stack([series[i + WINDOW] for i in range(300)])

model = SensorForecaster(name="sensor_forecaster")
model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3), loss="mse")
model.fit(x, y, batch_size=32, epochs=1, verbose=2)
