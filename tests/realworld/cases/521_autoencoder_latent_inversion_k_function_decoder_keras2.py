"""Real-world case 521.

Source: https://github.com/keras-team/keras/issues/8648
Bug: to invert a trained decoder (find the code whose reconstruction matches a
given image), the user wraps the decoder in a Keras backend function,
`K.function([decoder.input], [decoder.output])`, and optimises a tf.Variable fed
through it. A backend function returns NumPy arrays, so the reconstruction and
the loss are constants to the tape: tape.gradient returns None for the code and
apply_gradients raises "No gradients provided for any variable".
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

# a function from a latent code to the reconstructed image
decode = K.function([decoder.input], [decoder.output])

target = x_train[:1]
latent = tf.Variable(tf.zeros((1, 8)), name="latent_code")
optimizer = tf.keras.optimizers.Adam(0.05)
for step in range(20):
    with tf.GradientTape() as tape:
        reconstruction = decode([latent])[0]
        loss = tf.reduce_mean(tf.square(reconstruction - target))
    grads = tape.gradient(loss, [latent])
    optimizer.apply_gradients(zip(grads, [latent]))
print("reconstruction error:", float(loss))
