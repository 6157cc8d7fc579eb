"""Real-world case 414.

Source: https://github.com/BITLsy/Transformer_tf2.0/issues/1
Bug: training the Transformer for NER warns "Gradients do not exist for
variables" for exactly the encoder layer's variables (multi-head attention
dense layers, feed-forward, both layer norms) while the embedding and the
tagging head train. The encoder block's output never reaches the tagger: here
call() runs the encoder but feeds the embeddings, not its result, to the
classifier.
Setting: Keras 3 subclassed token tagger with a hand-written encoder layer,
model.fit with sparse categorical cross-entropy.
"""
import keras
import numpy as np
from keras import layers

keras.utils.set_random_seed(0)
VOCAB, TAGS, T, D = 40, 5, 9, 16


class EncoderLayer(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.mha = layers.MultiHeadAttention(num_heads=2, key_dim=8)
        self.ffn = keras.Sequential([layers.Dense(32, activation="relu"), layers.Dense(D)])
        self.norm1 = layers.LayerNormalization()
        self.norm2 = layers.LayerNormalization()

    def call(self, x, training=False):
        h = self.norm1(x + self.mha(x, x, training=training))
        return self.norm2(h + self.ffn(h))


class NERTransformer(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embedding = layers.Embedding(VOCAB, D)
        self.encoder_layer = EncoderLayer(name="encoder_layer")
        self.classifier = layers.Dense(TAGS, name="tags")

    def call(self, tokens, training=False):
        emb = self.embedding(tokens)
        enc = self.encoder_layer(emb, training=training)
        return self.classifier(emb)


x = np.random.randint(1, VOCAB, (32, T))
y = (x % TAGS).astype("int32")
model = NERTransformer(name="ner_transformer")
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(x, y, batch_size=16, epochs=1, verbose=2)
