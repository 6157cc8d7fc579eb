"""Real-world case 525.

Source: https://github.com/huggingface/transformers/issues/2256
Bug: a small BERT-style encoder whose call returns (sequence_output,
pooled_output) like TFBertModel; the pooler is a Dense(tanh) on the [CLS]
vector. The extractive-QA model built on it only uses the sequence output
(start/end span logits), so the pooled output is computed on every step and
then dropped: the pooler's kernel and bias never reach the loss and Keras
warns "Gradients do not exist for variables [...pooler...]" while the rest of
the encoder fine-tunes normally.
Setting: Keras 3 functional model over custom Layer subclasses
(MultiHeadAttention transformer block), eager custom training loop with
tf.GradientTape and optimizer.apply_gradients.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

VOCAB = 50
SEQ_LEN = 16
DIM = 32
HEADS = 2


class TransformerBlock(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.att = layers.MultiHeadAttention(HEADS, DIM // HEADS, name="attention")
        self.ffn_in = layers.Dense(2 * DIM, activation="gelu", name="ffn_in")
        self.ffn_out = layers.Dense(DIM, name="ffn_out")
        self.norm1 = layers.LayerNormalization(name="norm1")
        self.norm2 = layers.LayerNormalization(name="norm2")

    def call(self, x, padding_mask=None):
        att_mask = None if padding_mask is None else padding_mask[:, None, :]
        h = self.norm1(x + self.att(x, x, attention_mask=att_mask))
        return self.norm2(h + self.ffn_out(self.ffn_in(h)))


class MiniBert(layers.Layer):
    def __init__(self, add_pooling_layer=True, **kwargs):
        super().__init__(**kwargs)
        self.tok = layers.Embedding(VOCAB, DIM, name="word_embeddings")
        self.pos = layers.Embedding(SEQ_LEN, DIM, name="position_embeddings")
        self.block = TransformerBlock(name="layer_0")
        self.pooler = None
        if add_pooling_layer:
            self.pooler = layers.Dense(DIM, activation="tanh", name="pooler")

    def call(self, ids):
        mask = ops.not_equal(ids, 0)
        h = self.tok(ids) + self.pos(ops.arange(SEQ_LEN))[None]
        sequence_output = self.block(h, padding_mask=mask)
        if self.pooler is None:
            return (sequence_output,)
        pooled_output = self.pooler(sequence_output[:, 0])
        return sequence_output, pooled_output


keras.utils.set_random_seed(0)
ids_in = keras.Input(shape=(SEQ_LEN,), dtype="int32", name="input_ids")
outputs = MiniBert(name="bert")(ids_in)
sequence_output = outputs[0]
span_logits = layers.Dense(2, name="qa_outputs")(sequence_output)
start_logits = layers.Lambda(lambda t: t[..., 0], name="start")(span_logits)
end_logits = layers.Lambda(lambda t: t[..., 1], name="end")(span_logits)
model = keras.Model(ids_in, [start_logits, end_logits])

rng = np.random.default_rng(0)
ids = rng.integers(1, VOCAB, size=(64, SEQ_LEN)).astype("int32")
ids[:, 0] = 1  # [CLS]
starts = rng.integers(1, SEQ_LEN // 2, size=(64,))
ends = starts + rng.integers(0, SEQ_LEN // 2, size=(64,))
dataset = tf.data.Dataset.from_tensor_slices((ids, starts, ends)).batch(16)

optimizer = keras.optimizers.Adam(1e-3)
span_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

for step, (x, s, e) in enumerate(dataset.take(2)):
    with tf.GradientTape() as tape:
        start_pred, end_pred = model(x, training=True)
        loss = (span_loss(s, start_pred) + span_loss(e, end_pred)) / 2
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("step", step, "loss", float(loss))
