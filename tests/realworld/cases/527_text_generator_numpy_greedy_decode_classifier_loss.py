"""Real-world case 527.

Source: https://github.com/huggingface/transformers/issues/12068
Bug: a language-model generator is fine-tuned so that the texts it writes are
classified as a wanted label by a frozen text classifier. As in the report,
the generated token ids are decoded to strings and the strings are fed to the
classifier, whose cross-entropy is the generator's loss. Here the greedy
decoding loop picks each next token with NumPy on the step logits
(np.argmax(logits.numpy())), so the generated text is plain Python data: the
classifier's loss has no path back to the generator and tape.gradient returns
None for every generator variable (the script prints them and skips the
update).
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

    def generate(self, batch_size):
        token = np.full((batch_size,), WORDS.index("<bos>"), dtype="int32")
        state = ops.zeros((batch_size, UNITS))
        generated = []
        for _ in range(GEN_LEN):
            logits, state = self.step(token, state)
            token = np.argmax(logits.numpy(), axis=-1).astype("int32")
            generated.append(token)
        return np.stack(generated, axis=1)


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
cce = keras.losses.SparseCategoricalCrossentropy()
labels = np.full((8,), TARGET_LABEL, dtype="int32")

for step in range(2):
    with tf.GradientTape() as tape:
        sequences = generator.generate(batch_size=8)
        texts = batch_decode(sequences)
        preds = classifier(tf.constant(texts))
        loss = cce(labels, preds)
    grads = tape.gradient(loss, generator.trainable_variables)
    print("step", step, "loss", float(loss), "grads:", grads)
    if any(g is None for g in grads):
        continue
    optimizer.apply_gradients(zip(grads, generator.trainable_variables))
