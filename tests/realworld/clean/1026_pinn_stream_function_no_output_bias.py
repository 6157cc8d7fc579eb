"""Clean control 1026 (expected clean).

Source: https://github.com/ehsanhaghighat/sciann/issues/11
Twin of case 1006: the p and psi output layers have no bias
(`use_bias=False`), since only derivatives of p and psi enter the loss; every
trainable weight and both lambdas then get a gradient.
Setting: physics-informed NN, third-order nested GradientTapes in a
tf.function step, extra trainable tf.Variables, Keras 3.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

inputs = keras.Input(shape=(3,))
h = inputs
for _ in range(4):
    h = layers.Dense(20, activation="tanh", kernel_initializer="glorot_uniform")(h)
p_out = layers.Dense(1, name="p", use_bias=False)(h)
psi_out = layers.Dense(1, name="psi", use_bias=False)(h)
model = keras.Model(inputs, [p_out, psi_out])

lamb1 = tf.Variable(0.0, name="lamb1")
lamb2 = tf.Variable(0.0, name="lamb2")
train_vars = model.trainable_variables + [lamb1, lamb2]
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(t, x, y, u_train, v_train):
    with tf.GradientTape() as tape:
        with tf.GradientTape(persistent=True) as tape3:
            tape3.watch([x, y])
            with tf.GradientTape(persistent=True) as tape2:
                tape2.watch([t, x, y])
                with tf.GradientTape(persistent=True) as tape1:
                    tape1.watch([x, y])
                    p, psi = model(tf.concat([t, x, y], axis=1))
                u = tape1.gradient(psi, y)
                v = -tape1.gradient(psi, x)
                p_x, p_y = tape1.gradient(p, x), tape1.gradient(p, y)
            u_t, v_t = tape2.gradient(u, t), tape2.gradient(v, t)
            u_x, u_y = tape2.gradient(u, x), tape2.gradient(u, y)
            v_x, v_y = tape2.gradient(v, x), tape2.gradient(v, y)
        u_xx, u_yy = tape3.gradient(u_x, x), tape3.gradient(u_y, y)
        v_xx, v_yy = tape3.gradient(v_x, x), tape3.gradient(v_y, y)
        f_u = u_t + p_x + lamb1 * (u * u_x + v * u_y) - lamb2 * (u_xx + u_yy)
        f_v = v_t + p_y + lamb1 * (u * v_x + v * v_y) - lamb2 * (v_xx + v_yy)
        loss = (tf.reduce_mean(tf.square(f_u)) + tf.reduce_mean(tf.square(f_v))
                + tf.reduce_mean(tf.square(u - u_train)) + tf.reduce_mean(tf.square(v - v_train)))
    grads = tape.gradient(loss, train_vars)
    optimizer.apply_gradients(zip(grads, train_vars))
    return loss


rng = np.random.default_rng(1234)
n = 128
t_train = rng.uniform(0, 1, size=(n, 1)).astype("float32")
x_train = rng.uniform(-1, 1, size=(n, 1)).astype("float32")
y_train = rng.uniform(-1, 1, size=(n, 1)).astype("float32")
u_train = (np.cos(np.pi * y_train) * np.exp(-t_train)).astype("float32")
v_train = (np.sin(np.pi * x_train) * np.exp(-t_train)).astype("float32")
for epoch in range(5):
    loss = train_step(tf.constant(t_train), tf.constant(x_train), tf.constant(y_train), u_train, v_train)
    print("epoch", epoch, "loss", float(loss), "lambda", float(lamb1), float(lamb2))
