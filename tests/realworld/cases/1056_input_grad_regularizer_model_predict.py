"""Real-world case 1056.

Source: https://github.com/tensorflow/tensorflow/issues/38119
Bug: a custom loss adds an input-gradient penalty (double backprop):
lambda * ||d CE / d X||. Inside the loss the prediction is recomputed with
`model.predict(X_tensor)`, which returns a NumPy array: the inner tape sees
no path from X_tensor to the cross-entropy (the input gradient is None, so
the penalty is dropped), and the returned loss is a constant with respect to
the model's weights, so the optimizer gets no gradient at all.
Setting: input-gradient regularization, nested GradientTapes, eager custom
loop, Keras 3.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

rng = np.random.default_rng(0)
X = rng.normal(size=(64, 20)).astype("float32")
Y = keras.utils.to_categorical(np.argmax(X[:, :4], axis=1), 4).astype("float32")

model2 = keras.Sequential([
    keras.Input(shape=(20,)),
    layers.Dense(32, activation="relu", name="dense"),
    layers.Dense(4, activation="softmax", name="probs"),
], name="model2")
optimizer = keras.optimizers.Adam(1e-3)


def keras_loss(y_true, y_pred, X, lambda_, model):
    X_tensor = tf.convert_to_tensor(X)
    with tf.GradientTape() as inp_tape:
        inp_tape.watch(X_tensor)
        pred = model.predict(X_tensor, batch_size=None, steps=None, verbose=0)
        inp_grad_reg_loss = keras.losses.categorical_crossentropy(y_true, pred)
    inpgrad = inp_tape.gradient(inp_grad_reg_loss, X_tensor)
    if inpgrad is None:
        print("None gradients for: ['X_tensor']")
        return inp_grad_reg_loss
    return inp_grad_reg_loss + lambda_ * tf.norm(inpgrad)


for step in range(3):
    with tf.GradientTape() as tape:
        y_pred = model2(X, training=True)
        loss = tf.reduce_mean(keras_loss(Y, y_pred, X, 0.1, model2))
    grads = tape.gradient(loss, model2.trainable_variables)
    optimizer.apply_gradients(zip(grads, model2.trainable_variables))
    print("step", step, "loss", float(loss))
