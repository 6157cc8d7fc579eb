"""Real-world case 504.

Source: https://github.com/OpenNMT/OpenNMT-tf/issues/537
Bug: sequence-level REINFORCE for a seq2seq model. The user reuses the decoder's
sampling loop (written like OpenNMT-tf's greedy/beam search, a tf.while_loop with
back_prop=False) inside the GradientTape to get the log-probability of each sampled
translation, then weights it by an external reward (token overlap with the reference,
a stand-in for BLEU). In a tf.function, back_prop=False puts a StopGradient on every
output of the loop, so the summed log-probabilities are constants and the encoder,
embedding, decoder cell and output projection all get None.
Setting: Keras 3 layers driven by hand, @tf.function train step, raw GradientTape.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

VOCAB, HID, SRC_DIM, MAX_LEN, BOS = 12, 16, 10, 5, 0
keras.utils.set_random_seed(0)

encoder = layers.Dense(HID, activation="tanh", name="src_encoder")
embed = layers.Embedding(VOCAB, 8, name="tgt_embedding")
cell = layers.GRUCell(HID, name="decoder_cell")
proj = layers.Dense(VOCAB, name="output_proj")
optimizer = keras.optimizers.Adam(1e-3)

src = np.random.randn(16, SRC_DIM).astype("float32")
ref = np.random.randint(1, VOCAB, size=(16, MAX_LEN)).astype("int32")
cell(embed(tf.zeros([16], "int32")), [encoder(src)])  # build all layers
proj(tf.zeros([16, HID]))
variables = (encoder.trainable_variables + embed.trainable_variables
             + cell.trainable_variables + proj.trainable_variables)


@tf.function
def train_step(src, ref):
    with tf.GradientTape() as tape:
        batch = tf.shape(src)[0]

        def body(t, tokens, state, logp_sum, hyp):
            out, [state] = cell(embed(tokens), [state])
            logp = tf.nn.log_softmax(proj(out))
            tokens = tf.random.categorical(logp, 1, dtype=tf.int32)[:, 0]
            logp_sum += tf.gather(logp, tokens, batch_dims=1)
            return t + 1, tokens, state, logp_sum, hyp.write(t, tokens)

        init = (0, tf.fill([batch], BOS), encoder(src), tf.zeros([batch]), tf.TensorArray(tf.int32, MAX_LEN))
        _, _, _, logp_sum, hyp = tf.while_loop(lambda t, *_: t < MAX_LEN, body, init, back_prop=False)
        hyp = tf.transpose(hyp.stack())
        reward = tf.reduce_mean(tf.cast(tf.equal(hyp, ref), tf.float32), axis=1)
        loss = -tf.reduce_mean((reward - tf.reduce_mean(reward)) * logp_sum)
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss


print([v.path for v in variables])
print("loss", float(train_step(src, ref)))
