"""Clean control 679 (look-alike of case 279).

Source: https://github.com/Philyzh8/scTAG/issues/1
The same scTAG-style model whose pre_train() differentiates only the
encoder and decoder variables, the ones the reconstruction loss uses; the
cluster centres are left for the clustering phase, so no variable in the
list lacks a gradient.
Setting: Keras 2 (tf_keras) subclassed Model holding functional sub-models,
eager GradientTape pre-training loop (graph-attention layers replaced by
Dense layers, ZINB loss by MSE).
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K
from tf_keras.layers import Dense, Dropout, Input, Layer
from tf_keras.losses import MSE
from tf_keras.models import Model

tf.random.set_seed(0)


class ClusteringLayer(Layer):
    def __init__(self, n_clusters=4, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.n_clusters, self.alpha = n_clusters, alpha

    def build(self, input_shape):
        self.clusters = self.add_weight(shape=(self.n_clusters, input_shape[1]), initializer="glorot_uniform", name="clusters")

    def call(self, inputs):
        q = 1.0 / (1.0 + (K.sum(K.square(K.expand_dims(inputs, axis=1) - self.clusters), axis=2) / self.alpha))
        q **= (self.alpha + 1.0) / 2.0
        return K.transpose(K.transpose(q) / K.sum(q, axis=1))


class SCTAG(keras.Model):
    def __init__(self, X, hidden_dim=32, latent_dim=8):
        super().__init__()
        self.X = X
        X_input = Input(shape=(X.shape[1],))
        h = Dropout(0.2)(X_input)
        h = Dense(hidden_dim, activation="relu")(h)
        z_mean = Dense(latent_dim)(h)
        self.encoder = Model(inputs=X_input, outputs=z_mean, name="encoder")
        clustering_layer = ClusteringLayer(name="clustering")(z_mean)
        self.cluster_model = Model(inputs=X_input, outputs=clustering_layer, name="cluster_encoder")
        decx_in = Input(shape=(latent_dim,))
        h = Dense(units=hidden_dim, activation="relu")(decx_in)
        self.decoderX = Model(inputs=decx_in, outputs=Dense(X.shape[1])(h), name="decoderX")

    def pre_train(self, epochs=3, lr=1e-3):
        optimizer = keras.optimizers.Adam(learning_rate=lr)
        for epoch in range(1, epochs + 1):
            with tf.GradientTape(persistent=True) as tape:
                z = self.encoder(self.X)
                X_out = self.decoderX(z)
                loss = tf.reduce_mean(MSE(self.X, X_out))
            vars = self.encoder.trainable_weights + self.decoderX.trainable_weights
            grads = tape.gradient(loss, vars)
            optimizer.apply_gradients(zip(grads, vars))
            print("Epoch", epoch, " rec_loss:", loss.numpy())


X = np.random.rand(64, 20).astype("float32")
model = SCTAG(X)
model.pre_train(epochs=3)
