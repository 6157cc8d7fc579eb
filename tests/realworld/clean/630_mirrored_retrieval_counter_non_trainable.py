"""Clean control 630 (expected clean).

The retrieval model of case 230 with the streaming layer's int32 counter
created as non-trainable state, so the custom train_step only differentiates
the two embedding tables.
Setting: Keras 2 (tf_keras), tf.distribute.MirroredStrategy on two logical
CPUs, model.fit with a custom train_step.
"""
import tensorflow as tf

tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0], [tf.config.LogicalDeviceConfiguration()] * 2)
import numpy as np

tf.random.set_seed(0)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


class Streaming(tf.keras.layers.Layer):
    def build(self, input_shape):
        self._counter = self.add_weight("counter", shape=(), dtype=tf.int32, initializer="zeros",
                                        trainable=False)

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
