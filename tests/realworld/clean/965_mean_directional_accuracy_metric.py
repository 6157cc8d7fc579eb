"""Clean control 965 (expected clean).

Look-alike of case 565: the mean directional accuracy is kept, but as a
metric; the model is trained on the mean squared error, which is
differentiable, so every weight gets a gradient.
Setting: Sequential Keras 3 model, compile(loss="mse", metrics=[custom]) + fit().
"""
import numpy as np
import keras
from keras import ops

PRED_BATCH = 9


def mda(y_true, y_pred):
    true_dir = ops.sign(y_true[:, 1:] - y_true[:, :-1])
    pred_dir = ops.sign(y_pred[:, 1:] - y_pred[:, :-1])
    same_dir = ops.equal(true_dir, pred_dir)
    return ops.mean(ops.cast(same_dir, "float32"), axis=-1)


x_train = np.random.randn(90, PRED_BATCH).astype("float32")
y_train = np.cumsum(np.random.randn(90, PRED_BATCH), axis=1).astype("float32")

m = keras.Sequential([keras.Input(shape=(PRED_BATCH,)), keras.layers.Dense(PRED_BATCH)])
m.compile(optimizer="adam", loss="mse", metrics=[mda])
history = m.fit(x=x_train, y=y_train, batch_size=9, epochs=3, verbose=0)
print("loss per epoch:", [round(v, 4) for v in history.history["loss"]])
