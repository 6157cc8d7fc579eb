"""Real-world case 512.

Source: https://github.com/yu4u/age-gender-estimation/issues/85
Bug: a two-head age/gender network (gender softmax + 101-bin age softmax).
Following the issue, the age error is measured with the argmax bin instead of
the expected age, and that argmax "age MAE" is used as the age head's loss
(written with keras.ops in a keras.losses.Loss subclass). argmax has no
gradient, so the age head's Dense layer gets none: Keras warns "Gradients do
not exist for variables ['age/kernel', 'age/bias']". The shared trunk still
trains through the gender loss, so nothing fails.
Setting: Keras 3 multi-output functional model, custom Loss subclass, fit().
"""
import numpy as np
import keras
from keras import layers, ops

N_AGES = 101


class ArgmaxAgeMAE(keras.losses.Loss):
    def call(self, y_true, y_pred):
        pred_age = ops.cast(ops.argmax(y_pred, axis=-1), "float32")
        true_age = ops.cast(ops.reshape(y_true, (-1,)), "float32")
        return ops.abs(pred_age - true_age)


keras.utils.set_random_seed(0)
face = keras.Input(shape=(64,), name="face_embedding")
h = layers.Dense(64, activation="relu", name="trunk_1")(face)
h = layers.Dense(32, activation="relu", name="trunk_2")(h)
gender = layers.Dense(2, activation="softmax", name="gender")(h)
age = layers.Dense(N_AGES, activation="softmax", name="age")(h)
model = keras.Model(face, {"gender": gender, "age": age})
model.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss={"gender": "sparse_categorical_crossentropy", "age": ArgmaxAgeMAE()})

rng = np.random.default_rng(0)
x = rng.normal(size=(128, 64)).astype("float32")
y = {"gender": rng.integers(0, 2, size=(128,)), "age": rng.integers(0, N_AGES, size=(128,))}
model.fit(x, y, batch_size=32, epochs=1, verbose=0)
