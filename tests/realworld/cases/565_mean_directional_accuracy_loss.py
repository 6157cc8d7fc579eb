"""Real-world case 565.

Source: https://github.com/rstudio/keras3/issues/515
Bug: a "mean directional accuracy" is used as the training loss: it compares
the sign of the step-to-step change of the prediction with that of the target
with an equality test and casts the boolean result to float. The comparison
has no gradient, so fit() finds no gradient for any weight of the model.
Setting: Sequential Keras 3 model, compile(loss=custom function) + fit().
"""
import numpy as np
import keras
from keras import ops

PRED_BATCH = 9


def mda(y_true, y_pred):
    true_dir = ops.sign(y_true[:, 1:] - y_true[:, :-1])
    pred_dir = ops.sign(y_pred[:, 1:] - y_pred[:, :-1])
    same_dir = ops.equal(true_dir, pred_dir)
    return 1.0 - ops.mean(ops.cast(same_dir, "float32"), axis=-1)


x_train = np.random.randn(90, PRED_BATCH).astype("float32")
y_train = np.cumsum(np.random.randn(90, PRED_BATCH), axis=1).astype("float32")

m = keras.Sequential([keras.Input(shape=(PRED_BATCH,)), keras.layers.Dense(PRED_BATCH)])
m.compile(optimizer="adam", loss=mda)
m.fit(x=x_train, y=y_train, batch_size=9, epochs=1, verbose=0)
