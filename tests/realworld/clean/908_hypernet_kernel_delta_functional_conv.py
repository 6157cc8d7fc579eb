"""Real-world control 908 (fixed twin of case 508).

Source: https://shijianchuo.net/question/50518569.html
Fix: the predicted update is added to the kernel as a tensor and the convolution
is applied functionally with `tf.nn.conv2d` on that tensor, so the loss depends on
the hypernetwork output and both networks get gradients.
Setting: hypernetwork / dynamic weights, Keras 3 Sequential models, eager GradientTape.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

np.random.seed(0)
tf.random.set_seed(0)

main_net = keras.Sequential([keras.Input((8, 8, 3)),
                             layers.Conv2D(16, 3, padding="same", activation="relu", name="conv"),
                             layers.GlobalAveragePooling2D(name="pool"),
                             layers.Dense(10, name="head")], name="main_net")
hyper_net = keras.Sequential([keras.Input((8, 8, 3)),
                              layers.Conv2D(4, 3, padding="same", activation="relu", name="h_conv"),
                              layers.GlobalAveragePooling2D(name="h_pool"),
                              layers.Dense(3 * 3 * 3 * 16, name="kernel_delta")], name="hyper_net")
conv = main_net.get_layer("conv")
head = main_net.get_layer("head")
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
variables = main_net.trainable_variables + hyper_net.trainable_variables

x = np.random.rand(32, 8, 8, 3).astype("float32")
y = np.random.randint(0, 10, size=(32,))

for step in range(2):
    with tf.GradientTape() as tape:
        delta = tf.reduce_mean(hyper_net(x, training=True), axis=0)
        kernel = conv.kernel + 0.01 * tf.reshape(delta, conv.kernel.shape)
        h = tf.nn.relu(tf.nn.conv2d(x, kernel, strides=1, padding="SAME") + conv.bias)
        logits = head(tf.reduce_mean(h, axis=[1, 2]))
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    print("step", step, "loss", float(loss),
          "hypernet grads:", [None if g is None else float(tf.norm(g)) for g in grads[-4:]])
