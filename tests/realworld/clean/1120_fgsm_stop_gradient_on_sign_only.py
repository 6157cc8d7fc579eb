"""Real-world control 1120 (twin of case 1100).

Source: https://github.com/cleverhans-lab/cleverhans/issues/243
Fixed: as the issue proposes, tf.stop_gradient wraps only the sign
of the gradient, adv_x = x + eps * tf.stop_gradient(tf.sign(grad)), so the
adversarial example stays differentiable in x (with an identity Jacobian
inside the clipping range) and the adversarial saliency map is computed.
Setting: Keras 3 Sequential classifier, FGSM helper with a nested GradientTape, input gradient inside tf.function.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def fast_gradient_method(model, x, y, eps):
    with tf.GradientTape() as g:
        g.watch(x)
        loss = loss_fn(y, model(x))
    grad = g.gradient(loss, x)
    adv_x = x + eps * tf.stop_gradient(tf.sign(grad))
    return tf.clip_by_value(adv_x, 0.0, 1.0)


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x_train = rng.random((256, 8, 8, 1)).astype("float32")
y_train = (x_train[:, :4].mean(axis=(1, 2, 3)) > x_train[:, 4:].mean(axis=(1, 2, 3))).astype("int32")

model = keras.Sequential([
    keras.Input(shape=(8, 8, 1)),
    layers.Conv2D(8, 3, activation="relu", name="conv"),
    layers.Flatten(),
    layers.Dense(2, name="logits"),
])
model.compile(optimizer="adam", loss=loss_fn)
model.fit(x_train, y_train, batch_size=32, epochs=1, verbose=2)


@tf.function
def adversarial_saliency(images, labels):
    with tf.GradientTape() as tape:
        tape.watch(images)
        adv_images = fast_gradient_method(model, images, labels, eps=0.05)
        adv_loss = loss_fn(labels, model(adv_images))
    return tape.gradient(adv_loss, images)


images = tf.constant(x_train[:16])
saliency = adversarial_saliency(images, tf.constant(y_train[:16]))
print("adversarial saliency max:", float(tf.reduce_max(tf.abs(saliency))))
