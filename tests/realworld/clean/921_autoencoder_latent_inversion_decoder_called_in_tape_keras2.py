"""Clean control 921 (expected clean).

The latent-space inversion of case 521 done as the answer to such reports
suggests: the decoder model itself is called on the tf.Variable inside the tape,
so the reconstruction stays a tensor and the code gets a gradient. The Keras
backend function is kept, but only to fetch a NumPy preview after the loop.
Setting: autoencoder, tf.keras (Keras 2) Sequential encoder/decoder trained with fit(),
then latent-space optimisation in an eager GradientTape loop.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K
from tensorflow.keras import layers

tf.random.set_seed(0)
np.random.seed(0)

encoder = tf.keras.Sequential([layers.Input((64,)), layers.Dense(32, activation="relu"),
                               layers.Dense(8)], name="encoder")
decoder = tf.keras.Sequential([layers.Input((8,)), layers.Dense(32, activation="relu"),
                               layers.Dense(64, activation="sigmoid")], name="decoder")
autoencoder = tf.keras.Sequential([encoder, decoder], name="autoencoder")
autoencoder.compile(optimizer="adam", loss="binary_crossentropy")
x_train = np.random.rand(256, 64).astype("float32")
autoencoder.fit(x_train, x_train, epochs=2, batch_size=64, verbose=0)

# NumPy view of the decoder, for inspection only
decode = K.function([decoder.input], [decoder.output])

target = x_train[:1]
latent = tf.Variable(tf.zeros((1, 8)), name="latent_code")
optimizer = tf.keras.optimizers.Adam(0.05)
for step in range(20):
    with tf.GradientTape() as tape:
        reconstruction = decoder(latent, training=False)
        loss = tf.reduce_mean(tf.square(reconstruction - target))
    grads = tape.gradient(loss, [latent])
    optimizer.apply_gradients(zip(grads, [latent]))
preview = decode([latent.numpy()])[0]
print("reconstruction error:", float(loss), "preview range:", preview.min(), preview.max())
