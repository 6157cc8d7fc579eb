"""Real-world case 1007.

Source: https://github.com/keras-team/keras-hub/issues/2102
Bug: to fit a binary classifier on "Gemma pre-trained model embeddings" the
user keeps the whole backbone inside their model (so all its weights are
trainable variables) but only calls `backbone.token_embedding(token_ids)` in
`call`. The decoder blocks and final norm never run, and fit() warns
"Gradients do not exist for variables ['decoder_block_0/...', ...]". A small
Gemma-like backbone (token embedding + 2 decoder blocks) stands in for the
pre-trained preset.
Setting: Keras 3, subclassed model wrapping a functional backbone, fit().
"""
import numpy as np
import keras
from keras import layers, ops

VOCAB, SEQ, DIM = 100, 12, 16


class DecoderBlock(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.pre_attention_norm = layers.LayerNormalization(name="pre_attention_norm")
        self.attention = layers.MultiHeadAttention(num_heads=2, key_dim=8, name="attention")
        self.pre_ffw_norm = layers.LayerNormalization(name="pre_ffw_norm")
        self.ffw_gating = layers.Dense(32, activation="gelu", name="ffw_gating")
        self.ffw_linear = layers.Dense(DIM, name="ffw_linear")

    def call(self, x, padding_mask):
        h = self.pre_attention_norm(x)
        mask = ops.cast(padding_mask[:, None, :], "bool")
        x = x + self.attention(h, h, attention_mask=mask)
        return x + self.ffw_linear(self.ffw_gating(self.pre_ffw_norm(x)))


def build_backbone():
    token_ids = keras.Input(shape=(SEQ,), dtype="int32", name="token_ids")
    padding_mask = keras.Input(shape=(SEQ,), dtype="int32", name="padding_mask")
    x = layers.Embedding(VOCAB, DIM, name="token_embedding")(token_ids)
    for i in range(2):
        x = DecoderBlock(name=f"decoder_block_{i}")(x, padding_mask)
    x = layers.LayerNormalization(name="final_normalization")(x)
    return keras.Model({"token_ids": token_ids, "padding_mask": padding_mask}, x, name="gemma_backbone")


class GemmaClassifier(keras.Model):
    def __init__(self, backbone, **kwargs):
        super().__init__(**kwargs)
        self.backbone = backbone
        self.pool = layers.GlobalAveragePooling1D()
        self.head = layers.Dense(1, activation="sigmoid", name="head")

    def call(self, inputs):
        embeddings = self.backbone.get_layer("token_embedding")(inputs["token_ids"])
        return self.head(self.pool(embeddings))


backbone = build_backbone()
model = GemmaClassifier(backbone)
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"])

rng = np.random.default_rng(0)
token_ids = rng.integers(1, VOCAB, size=(64, SEQ)).astype("int32")
padding_mask = np.ones((64, SEQ), dtype="int32")
labels = (token_ids[:, 0] > VOCAB // 2).astype("float32")
model.fit({"token_ids": token_ids, "padding_mask": padding_mask}, labels, batch_size=16, epochs=2, verbose=2)
