"""Real-world case 881 (control for 481).

Source: https://github.com/tensorflow/tensorflow/issues/11756
Fix: as the answer in the report suggests, the excluded positions are marked with
np.finfo(np.float32).min instead of -inf. The scores are still multiplied by the
mask and the excluded positions still get probability 0, but the derivative of the
product is a large finite number times 0, so every gradient stays finite.
Setting: Keras 3 subclassed pointer network (LSTM encoder + additive scoring layer)
over padded sequences from a tf.data pipeline, eager GradientTape training loop.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)
B, T, F = 8, 6, 4


class PointerNet(keras.Model):
    def __init__(self, units=8, **kwargs):
        super().__init__(**kwargs)
        self.encoder = keras.layers.LSTM(units, return_sequences=True)
        self.proj = keras.layers.Dense(units, activation="tanh")
        self.score = keras.layers.Dense(1, activation="sigmoid")

    def call(self, x, inf_mask):
        h = self.encoder(x)
        e = tf.squeeze(self.score(self.proj(h)), -1)  # (B, T), in (0, 1)
        b = e * inf_mask                              # float32 min where padded
        return tf.nn.softmax(b, axis=-1)


lengths = np.random.randint(3, T + 1, size=64)
x_all = np.random.normal(size=(64, T, F)).astype("float32")
target_all = np.array([np.random.randint(0, n) for n in lengths], dtype="int32")
valid_all = (np.arange(T)[None, :] < lengths[:, None])
mask_all = np.where(valid_all, 4.0, np.finfo(np.float32).min).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x_all, mask_all, target_all)).batch(B)

model = PointerNet()
optimizer = keras.optimizers.Adam(1e-2)
for step, (x, inf_mask, target) in enumerate(dataset.take(3)):
    with tf.GradientTape() as tape:
        probs = model(x, inf_mask)
        picked = tf.gather(probs, target, batch_dims=1)
        loss = -tf.reduce_mean(tf.math.log(picked + 1e-9))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("step", step, "loss", float(loss))
