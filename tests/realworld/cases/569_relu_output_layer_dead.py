"""Real-world case 569.

Source: https://community.deeplearning.ai/t/loss-values-do-not-change/324182
Bug: the regression model (y = 2x - 1, targets partly negative) ends with
Dense(1, activation="relu"). For most initialisations the output unit's
pre-activation is negative on every training sample, so the ReLU outputs 0
everywhere and passes back a zero gradient: every weight gets an all-zero
gradient and the loss never moves ("6 or 7 times out of 10").
Setting: functional Keras 3 model, model.compile() + model.fit().
"""
import numpy as np
import keras
from keras import Model
from keras.layers import Input, Dense

keras.utils.set_random_seed(1)

x = np.array([[-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0]])
y = np.array([[-3.0, -1.0, 1.0, 3.0, 5.0, 7.0, 9.0]])
x = np.reshape(x, (7, 1))
y = np.reshape(y, (7, 1))

input_1 = Input(shape=(1,))
dense_1 = Dense(4, activation="relu")(input_1)
dense_2 = Dense(2, activation="relu")(dense_1)
dense_3 = Dense(1, activation="relu")(dense_2)
model_2 = Model(inputs=input_1, outputs=dense_3)
model_2.compile(loss=keras.losses.MeanSquaredError(), optimizer=keras.optimizers.Adam(0.001))
history = model_2.fit(x, y, epochs=30, verbose=0)
print("first/last loss:", history.history["loss"][0], history.history["loss"][-1])
print(model_2.predict(np.array([[10.0]]), verbose=0))
