"""Real-world case 508.

Source: https://shijianchuo.net/question/50518569.html
Bug: a hypernetwork looks at the batch and predicts an additive update for the
first convolution kernel of the main network; the user writes the update into
the kernel with `assign_add` inside the tape and then calls the main network.
Assignment into a variable is not differentiable, so the loss only sees the
kernel's new value and the hypernetwork gets no gradient at all (the reporter
checked that the kernel really changed, yet backprop never reached the weight
predictor). Keras warns that gradients do not exist for the hypernetwork.
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
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
variables = main_net.trainable_variables + hyper_net.trainable_variables

x = np.random.rand(32, 8, 8, 3).astype("float32")
y = np.random.randint(0, 10, size=(32,))

for step in range(2):
    with tf.GradientTape() as tape:
        delta = tf.reduce_mean(hyper_net(x, training=True), axis=0)
        conv.kernel.assign_add(0.01 * tf.reshape(delta, conv.kernel.shape))
        logits = main_net(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    print("step", step, "loss", float(loss),
          "hypernet grads:", [None if g is None else float(tf.norm(g)) for g in grads[-4:]])
