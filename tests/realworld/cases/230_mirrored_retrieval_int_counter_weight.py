"""Real-world case 230.

Source: https://github.com/tensorflow/recommenders/issues/138
Bug: running the TFRS retrieval tutorial under MirroredStrategy, the top-k
streaming layer owns an int32 `counter` created with add_weight, which leaves
it trainable; the custom train_step asks the tape for every trainable
variable, so TF warns "The dtype of the source tensor must be floating ...
got tf.int32" and "Gradients do not exist for variables ['counter:0']".
Setting: Keras 2 (tf_keras), tf.distribute.MirroredStrategy on two logical
CPUs, model.fit with a custom train_step (tfrs.Model style compute_loss).
"""
import tensorflow as tf

tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0], [tf.config.LogicalDeviceConfiguration()] * 2)
import numpy as np

tf.random.set_seed(0)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


class Streaming(tf.keras.layers.Layer):
    def build(self, input_shape):
        self._counter = self.add_weight("counter", shape=(), dtype=tf.int32, initializer="zeros")

    def call(self, query_embeddings, candidate_embeddings):
        return tf.matmul(query_embeddings, candidate_embeddings, transpose_b=True)


class MovielensModel(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.user_model = tf.keras.Sequential([tf.keras.layers.Embedding(20, 8)])
        self.movie_model = tf.keras.Sequential([tf.keras.layers.Embedding(30, 8)])
        self.top_k = Streaming()
        self.task_loss = tf.keras.losses.CategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.SUM)

    def compute_loss(self, features, training=False):
        user_embeddings = self.user_model(features["user_id"])
        movie_embeddings = self.movie_model(features["movie_title"])
        scores = self.top_k(user_embeddings, movie_embeddings)
        labels = tf.eye(tf.shape(scores)[0], tf.shape(scores)[1])
        return self.task_loss(labels, scores)

    def train_step(self, features):
        with tf.GradientTape() as tape:
            loss = self.compute_loss(features, training=True)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        return {"loss": loss}


ratings = tf.data.Dataset.from_tensor_slices({
    "user_id": np.random.randint(0, 20, size=64),
    "movie_title": np.random.randint(0, 30, size=64),
}).batch(16)
with strategy.scope():
    model = MovielensModel()
    model.compile(optimizer=tf.keras.optimizers.legacy.Adagrad(learning_rate=0.1))
model.fit(ratings, epochs=1, verbose=0)
print("trainable:", [v.name for v in model.trainable_variables])
