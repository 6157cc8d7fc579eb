"""Real-world case 1041.

Source: https://github.com/tensorflow/tensorflow/issues/50243
Bug: an auto-regressive decoder collects its per-step outputs in a
tf.TensorArray inside tf.while_loop, but calls `outputs.write(t, y)` without
keeping the returned TensorArray. Inside tf.function the write is lost, the
stacked result is a zero-filled array that does not depend on the decoder,
and every weight's gradient comes back as zeros: the loss never moves.
Setting: Keras 3 layers, custom training loop under tf.function, tf.while_loop + TensorArray.
"""
import numpy as np
import tensorflow as tf
import keras

STEPS, FEAT = 6, 4


class ARDecoder(keras.Model):
    def __init__(self):
        super().__init__()
        self.cell = keras.layers.GRUCell(16)
        self.proj = keras.layers.Dense(FEAT)

    def call(self, x0):
        batch = tf.shape(x0)[0]
        outputs = tf.TensorArray(tf.float32, size=STEPS, element_shape=[None, FEAT])
        state = [tf.zeros([batch, 16])]

        def body(t, y_prev, state, outputs):
            h, new_state = self.cell(y_prev, state)
            y = self.proj(h)
            outputs.write(t, y)
            return t + 1, y, new_state, outputs

        _, _, _, outputs = tf.while_loop(
            lambda t, *_: t < STEPS, body, [0, x0, state, outputs])
        return tf.transpose(outputs.stack(), [1, 0, 2])


model = ARDecoder()
optimizer = keras.optimizers.Adam(1e-3)
x0 = np.random.rand(32, FEAT).astype("float32")
target = np.random.rand(32, STEPS, FEAT).astype("float32")
model(x0)


@tf.function
def train_step(x0, target):
    with tf.GradientTape() as tape:
        pred = model(x0)
        loss = tf.reduce_mean(tf.square(pred - target))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(5):
    loss = train_step(x0, target)
print("final loss", float(loss))
