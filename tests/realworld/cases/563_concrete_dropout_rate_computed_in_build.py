"""Real-world case 563.

Source: https://github.com/tensorflow/tensorflow/issues/38607
Bug: porting Concrete Dropout (a Wrapper layer that learns its dropout rate)
to TF2. The learnable logit is created with add_weight, but the dropout
probability p = sigmoid(p_logit) is computed once in build() and cached on
the layer; call() and the add_loss regularizer both use that cached tensor.
The model is built before training, so p is a constant by the time the
custom GradientTape loop records anything: the loss (including model.losses)
does not depend on p_logit and Keras warns "Gradients do not exist for
variables [... p_logit]". The dropout rate is never learned.
Setting: custom layer (Wrapper) + custom GradientTape loop with model.losses, keras3.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops


class ConcreteDropout(layers.Wrapper):
    def __init__(self, layer, weight_regularizer=1e-6, dropout_regularizer=1e-5,
                 init_min=0.1, init_max=0.1, **kwargs):
        super().__init__(layer, **kwargs)
        self.weight_regularizer = weight_regularizer
        self.dropout_regularizer = dropout_regularizer
        self.init_min = np.log(init_min) - np.log(1.0 - init_min)
        self.init_max = np.log(init_max) - np.log(1.0 - init_max)

    def build(self, input_shape):
        if not self.layer.built:
            self.layer.build(input_shape)
        self.input_dim = int(input_shape[-1])
        self.p_logit = self.add_weight(
            name="p_logit", shape=(1,),
            initializer=keras.initializers.RandomUniform(self.init_min, self.init_max),
            trainable=True,
        )
        self.p = ops.sigmoid(self.p_logit[0])
        self.built = True

    def concrete_dropout(self, x):
        eps, temp = 1e-7, 0.1
        unif_noise = keras.random.uniform(ops.shape(x))
        drop_prob = (ops.log(self.p + eps) - ops.log(1.0 - self.p + eps)
                     + ops.log(unif_noise + eps) - ops.log(1.0 - unif_noise + eps))
        drop_prob = ops.sigmoid(drop_prob / temp)
        return x * (1.0 - drop_prob) / (1.0 - self.p)

    def call(self, inputs, training=None):
        kernel_regularizer = self.weight_regularizer * ops.sum(ops.square(self.layer.kernel)) / (1.0 - self.p)
        dropout_regularizer = self.p * ops.log(self.p) + (1.0 - self.p) * ops.log(1.0 - self.p)
        dropout_regularizer = dropout_regularizer * self.dropout_regularizer * self.input_dim
        self.add_loss(kernel_regularizer + dropout_regularizer)
        return self.layer(self.concrete_dropout(inputs))


inputs = keras.Input(shape=(8,))
x = ConcreteDropout(layers.Dense(32, activation="relu"), name="cd_1")(inputs)
x = ConcreteDropout(layers.Dense(32, activation="relu"), name="cd_2")(x)
outputs = layers.Dense(1)(x)
model = keras.Model(inputs, outputs, name="concrete_mlp")

rng = np.random.default_rng(0)
X = rng.normal(size=(128, 8)).astype("float32")
Y = (X[:, :1] * 2.0 + 0.1 * rng.normal(size=(128, 1))).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((X, Y)).batch(32)
optimizer = keras.optimizers.Adam(1e-2)
mse = keras.losses.MeanSquaredError()

for epoch in range(2):
    for xb, yb in dataset:
        with tf.GradientTape() as tape:
            pred = model(xb, training=True)
            loss = mse(yb, pred) + ops.sum(model.losses)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("epoch", epoch, "loss", float(loss))
