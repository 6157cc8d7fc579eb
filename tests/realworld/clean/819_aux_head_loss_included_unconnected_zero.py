"""Clean control 819 (look-alike of case 419).

Source: https://github.com/tensorflow/tensorflow/issues/24849
The same two-head model and the same unconnected_gradients=ZERO flag, with
the auxiliary loss included in the total: every variable is connected.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
inputs = keras.Input((6,))
h = keras.layers.Dense(12, activation="relu", name="trunk")(inputs)
main = keras.layers.Dense(1, name="main")(h)
aux = keras.layers.Dense(3, name="aux")(h)
model = keras.Model(inputs, [main, aux], name="two_head")
optimizer = keras.optimizers.Adam(1e-3)

x = np.random.randn(32, 6).astype("float32")
y_main = np.random.randn(32, 1).astype("float32")
y_aux = np.random.randint(0, 3, 32)

for step in range(2):
    with tf.GradientTape() as tape:
        pred_main, pred_aux = model(x)
        main_loss = tf.reduce_mean(tf.square(pred_main - y_main))
        aux_loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y_aux, pred_aux, from_logits=True))
        loss = main_loss + 0.3 * aux_loss
    sources = [v.value for v in model.trainable_variables]
    grads = tape.gradient(loss, sources, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(step, float(main_loss), float(aux_loss))
