"""Real-world case 489.

Source: https://github.com/cleverhans-lab/cleverhans/issues/1051
Bug: in a projected-gradient-descent attack the starting point is
adv_x = clip(x + eta), a new tensor built from the clean image before the tape.
The step then watches the clean image x (the reporter: "loss is a function of x not
adv_x") and asks for the gradient w.r.t. adv_x. adv_x is a plain tensor that the tape
never watched, so the gradient of the loss w.r.t. the adversarial input is None and
the attack cannot take its first sign step.
Setting: TF2 eager PGD (cleverhans-style function) against a Keras 3 CNN classifier,
gradient w.r.t. the input image.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)

model = keras.Sequential([
    keras.Input((12, 12, 1)),
    keras.layers.Conv2D(8, 3, activation="relu"),
    keras.layers.GlobalAveragePooling2D(),
    keras.layers.Dense(10),
])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def projected_gradient_descent(model_fn, x, y, eps=0.1, eps_iter=0.02, nb_iter=5):
    eta = tf.random.uniform(tf.shape(x), -eps, eps)
    adv_x = tf.clip_by_value(x + eta, 0.0, 1.0)
    for i in range(nb_iter):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = loss_fn(y, model_fn(adv_x))
        grad = tape.gradient(loss, adv_x)
        if grad is None:
            print("None gradients for:", ["adv_x"])
            break
        adv_x = adv_x + eps_iter * tf.sign(grad)
        adv_x = x + tf.clip_by_value(adv_x - x, -eps, eps)
        adv_x = tf.clip_by_value(adv_x, 0.0, 1.0)
        print("iter", i, "loss", float(loss))
    return adv_x


images = tf.constant(np.random.uniform(0, 1, (4, 12, 12, 1)).astype("float32"))
labels = tf.constant(np.random.randint(0, 10, size=(4,)))
adv = projected_gradient_descent(model, images, labels)
print("max perturbation", float(tf.reduce_max(tf.abs(adv - images))))
