"""Clean control 693 (look-alike of case 293).

Source: https://github.com/yaringal/ConcreteDropout/issues/13
The same Concrete Dropout wrapper with p = sigmoid(p_logit) and the KL
regulariser computed in call() on every forward pass (build() only creates
p_logit), so both the relaxed dropout mask and the add_loss regulariser carry
a gradient back to p_logit.
Setting: Keras 3 functional regression model (MC-dropout uncertainty) with a
layers.Wrapper subclass, keras.ops and keras.random, model.fit.
"""
import numpy as np
import keras
from keras import layers, ops

keras.utils.set_random_seed(0)


class ConcreteDropout(layers.Wrapper):
    def __init__(self, layer, weight_regularizer=1e-6, dropout_regularizer=1e-5, **kwargs):
        super().__init__(layer, **kwargs)
        self.weight_regularizer = weight_regularizer
        self.dropout_regularizer = dropout_regularizer

    def build(self, input_shape):
        self.layer.build(input_shape)
        self.p_logit = self.add_weight(name="p_logit", shape=(1,),
                                       initializer=keras.initializers.RandomUniform(-2.0, 0.0))

    def call(self, inputs):
        p = ops.sigmoid(self.p_logit[0])
        kernel_regularizer = self.weight_regularizer * ops.sum(ops.square(self.layer.kernel)) / (1.0 - p)
        dropout_regularizer = p * ops.log(p) + (1.0 - p) * ops.log(1.0 - p)
        self.add_loss(kernel_regularizer + self.dropout_regularizer * inputs.shape[-1] * dropout_regularizer)
        eps, temp = 1e-7, 0.1
        unif_noise = keras.random.uniform(ops.shape(inputs))
        drop_prob = (ops.log(p + eps) - ops.log(1.0 - p + eps)
                     + ops.log(unif_noise + eps) - ops.log(1.0 - unif_noise + eps))
        random_tensor = 1.0 - ops.sigmoid(drop_prob / temp)
        return self.layer(inputs * random_tensor / (1.0 - p))


inputs = keras.Input((4,))
hidden = ConcreteDropout(layers.Dense(16, activation="relu"), name="concrete_dropout")(inputs)
outputs = ConcreteDropout(layers.Dense(1), name="concrete_dropout_1")(hidden)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mse")
print([v.path for v in model.trainable_variables])

x = np.random.rand(64, 4).astype("float32")
y = x.sum(axis=1, keepdims=True)
history = model.fit(x, y, batch_size=32, epochs=3, verbose=0)
print("loss:", history.history["loss"])
