"""Clean control 969 (expected clean).

Look-alike of case 569 with the mentors' fix: the hidden layers keep ReLU but
the output layer of the regression is linear (no activation), so it can
produce negative values and always passes the gradient back.
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
dense_3 = Dense(1)(dense_2)
model_2 = Model(inputs=input_1, outputs=dense_3)
model_2.compile(loss=keras.losses.MeanSquaredError(), optimizer=keras.optimizers.Adam(0.001))
history = model_2.fit(x, y, epochs=30, verbose=0)
print("first/last loss:", history.history["loss"][0], history.history["loss"][-1])
print(model_2.predict(np.array([[10.0]]), verbose=0))
