"""Real-world control 927 (fixed twin of case 527).

Source: https://github.com/huggingface/transformers/issues/12068
Fix: the text still leaves TensorFlow to be decoded and classified, but it is
treated as an action (REINFORCE): tokens are sampled from the step softmax,
the generator keeps the log-probabilities of the sampled tokens from its TF
logits, and the loss is -(classifier reward * sum of log-probs). The frozen
classifier's probability of the wanted label is only a constant reward, so
every generator variable gets a gradient through the log-probabilities.
Setting: Keras 3 subclassed generator (Embedding + GRUCell + Dense) decoded
eagerly step by step, functional classifier with TextVectorization on raw
strings, eager custom loop with tf.GradientTape.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

WORDS = ["<pad>", "<bos>", "good", "bad", "movie", "plot", "great", "awful",
         "acting", "boring", "fun", "the", "was", "really", "not", "very"]
VOCAB = len(WORDS)
UNITS = 32
GEN_LEN = 6
TARGET_LABEL = 1  # "positive"


class Generator(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embed = layers.Embedding(VOCAB, 16, name="gen_embed")
        self.cell = layers.GRUCell(UNITS, name="gen_cell")
        self.head = layers.Dense(VOCAB, name="lm_head")

    def step(self, token_ids, state):
        out, states = self.cell(self.embed(token_ids), [state])
        return self.head(out), states[0]

    def generate(self, batch_size, rng):
        token = np.full((batch_size,), WORDS.index("<bos>"), dtype="int32")
        state = ops.zeros((batch_size, UNITS))
        generated, log_probs = [], []
        for _ in range(GEN_LEN):
            logits, state = self.step(token, state)
            probs = ops.softmax(logits, axis=-1).numpy().astype("float64")
            probs /= probs.sum(axis=-1, keepdims=True)
            token = np.array([rng.choice(VOCAB, p=p) for p in probs], dtype="int32")
            log_probs.append(tf.gather(tf.nn.log_softmax(logits), token, batch_dims=1))
            generated.append(token)
        return np.stack(generated, axis=1), tf.add_n(log_probs)


def batch_decode(ids):
    return [" ".join(WORDS[i] for i in row if i > 1) for row in ids]


keras.utils.set_random_seed(0)
text_in = keras.Input(shape=(), dtype="string", name="text")
vectorize = layers.TextVectorization(vocabulary=WORDS[2:], output_sequence_length=GEN_LEN)
h = layers.Embedding(VOCAB + 2, 8, name="clf_embed")(vectorize(text_in))
h = layers.GlobalAveragePooling1D()(h)
sentiment = layers.Dense(2, activation="softmax", name="sentiment")(h)
classifier = keras.Model(text_in, sentiment, name="classifier")
classifier.trainable = False

generator = Generator(name="generator")
optimizer = keras.optimizers.Adam(1e-3)
rng = np.random.default_rng(0)

for step in range(2):
    with tf.GradientTape() as tape:
        sequences, seq_log_prob = generator.generate(batch_size=8, rng=rng)
        texts = batch_decode(sequences)
        preds = classifier(tf.constant(texts))
        reward = preds[:, TARGET_LABEL]
        loss = -tf.reduce_mean(reward * seq_log_prob)
    grads = tape.gradient(loss, generator.trainable_variables)
    print("step", step, "loss", float(loss))
    if any(g is None for g in grads):
        continue
    optimizer.apply_gradients(zip(grads, generator.trainable_variables))
