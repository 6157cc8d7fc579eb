"""Real-world case 272.

Source: https://github.com/keras-team/keras/issues/2995
Bug: a seq2seq model hands the encoder's final LSTM state to the decoder by
writing it into the stateful decoder LSTM's state variables
(Variable.assign) instead of passing it as initial_state; the decoder then
reads the state back from the variables, the assignment is not
differentiable, and the encoder (embedding + LSTM) gets no gradient at all,
as the thread warns ("there effectively is no connection between the two
during backprop").
Setting: seq2seq, Keras 3 functional encoder/decoder, eager GradientTape loop.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
B, T_IN, T_OUT, V, H = 8, 6, 5, 20, 16

enc_in = keras.Input((T_IN,))
_, h, c = layers.LSTM(H, return_state=True, name="encoder_lstm")(layers.Embedding(V, 8, name="enc_embed")(enc_in))
encoder = keras.Model(enc_in, [h, c], name="encoder")

dec_in = keras.Input(batch_shape=(B, T_OUT))
dec_seq = layers.LSTM(H, return_sequences=True, stateful=True, name="decoder_lstm")(layers.Embedding(V, 8)(dec_in))
decoder = keras.Model(dec_in, layers.Dense(V)(dec_seq), name="decoder")
decoder_lstm = decoder.get_layer("decoder_lstm")

optimizer = keras.optimizers.Adam(1e-2)
variables = encoder.trainable_variables + decoder.trainable_variables
src = np.random.randint(1, V, size=(B, T_IN))
tgt = np.flip(src[:, :T_OUT], axis=1).copy()
tgt_in = tf.constant(np.concatenate([np.zeros((B, 1), "int64"), tgt[:, :-1]], axis=1))

for step in range(3):
    with tf.GradientTape() as tape:
        h, c = encoder(src)
        for state, value in zip(decoder_lstm.states, (h, c)):
            state.assign(value)
        logits = decoder(tgt_in)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(tgt, logits, from_logits=True))
    grads = tape.gradient(loss, variables)
    print(step, float(loss), [v.path for v, g in zip(variables, grads) if g is None])
    optimizer.apply_gradients(zip(grads, variables))
