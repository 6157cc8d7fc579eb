"""Real-world case 484.

Source: https://github.com/tensorflow/tensorflow/issues/37726
Bug: a custom embedding layer keeps two trainable tables (the pretrained vocabulary
and extra rows for new tokens) and merges them with tf.concat once, in build(). The
merged matrix is then a constant tensor computed before any GradientTape exists;
call() looks tokens up in that constant, so neither table gets a gradient ("Gradients
do not exist for variables ...") and both stay at their initial values while the
classifier head trains.
Setting: Keras 3 custom Layer (add_weight in build) in a functional text classifier
on token ids, model.fit.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)
VOCAB, NEW_TOKENS, DIM, SEQ = 50, 5, 8, 12


class CustomEmbedding(keras.layers.Layer):
    def __init__(self, vocab_size, new_tokens, output_dim, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.new_tokens = new_tokens
        self.output_dim = output_dim

    def build(self, input_shape):
        self.pretrained = self.add_weight(
            name="pretrained_embeddings", shape=(self.vocab_size, self.output_dim),
            initializer="uniform", trainable=True)
        self.oov = self.add_weight(
            name="oov_embeddings", shape=(self.new_tokens, self.output_dim),
            initializer="uniform", trainable=True)
        self.embeddings = tf.concat([self.pretrained, self.oov], axis=0)

    def call(self, inputs):
        return tf.nn.embedding_lookup(self.embeddings, tf.cast(inputs, "int32"))


ids = keras.Input((SEQ,), dtype="int32")
h = CustomEmbedding(VOCAB, NEW_TOKENS, DIM, name="custom_embedding")(ids)
h = keras.layers.GlobalAveragePooling1D()(h)
out = keras.layers.Dense(1, activation="sigmoid")(h)
model = keras.Model(ids, out)
model.compile(optimizer="adam", loss="binary_crossentropy")

x = np.random.randint(0, VOCAB + NEW_TOKENS, size=(64, SEQ)).astype("int32")
y = np.random.randint(0, 2, size=(64, 1)).astype("float32")
history = model.fit(x, y, batch_size=16, epochs=1, verbose=0)
print("loss", history.history["loss"])
