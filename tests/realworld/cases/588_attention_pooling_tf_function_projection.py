"""Real-world case 588.

Source: https://playfultechnology.co.uk/qarac-porting-to-pytorch.html
Bug: the QARAC encoder's GlobalAttentionPoolingHead applies its local
projection through a method decorated with @tf.function (mapped over the
batch with tf.vectorized_map). Under model.fit() the nested function is traced
inside the train function and reads the Keras 3 variable by value, so the
`local_projection` weight never receives a gradient and Keras warns
"Gradients do not exist for variables [...local_projection]" at every step.
Setting: Keras 3 custom layer (build/call) inside subclassed encoder and
trainer models, compile() + fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class GlobalAttentionPoolingHead(keras.layers.Layer):
    def build(self, input_shape):
        width = input_shape[-1]
        self.global_projection = self.add_weight(name="global_projection", shape=(width, width))
        self.local_projection = self.add_weight(name="local_projection", shape=(width, width))

    @tf.function
    def project_local(self, X):
        return tf.tensordot(X, self.local_projection, axes=1)

    def call(self, X, training=None):
        gp = tf.linalg.l2_normalize(
            tf.tensordot(tf.reduce_sum(X, axis=1), self.global_projection, axes=1), axis=1)
        lp = tf.linalg.l2_normalize(tf.vectorized_map(self.project_local, X), axis=2)
        attention = tf.einsum("btw,bw->bt", lp, gp)
        return tf.reduce_sum(attention[..., tf.newaxis] * X, axis=1)


class QaracEncoderModel(keras.Model):
    def __init__(self, vocab_size=200, width=16, **kwargs):
        super().__init__(**kwargs)
        self.embedding = layers.Embedding(vocab_size, width)
        self.attention = layers.MultiHeadAttention(num_heads=2, key_dim=8)
        self.norm = layers.LayerNormalization()
        self.head = GlobalAttentionPoolingHead()

    def call(self, ids, training=None):
        x = self.embedding(ids)
        x = self.norm(x + self.attention(x, x))
        return self.head(x, training=training)


class QaracTrainerModel(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.question_encoder = QaracEncoderModel()
        self.answer_encoder = QaracEncoderModel()

    def call(self, inputs, training=None):
        questions, answers = inputs
        q = tf.linalg.l2_normalize(self.question_encoder(questions, training=training), axis=1)
        a = tf.linalg.l2_normalize(self.answer_encoder(answers, training=training), axis=1)
        return tf.reduce_sum(q * a, axis=1)


rng = np.random.default_rng(0)
questions = rng.integers(0, 200, size=(128, 10))
answers = np.where(rng.random((128, 10)) < 0.5, questions, rng.integers(0, 200, size=(128, 10)))
matches = (questions == answers).mean(axis=1).astype("float32")

trainer = QaracTrainerModel()
trainer.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
trainer.fit((questions, answers), matches, epochs=2, batch_size=32, verbose=0)
