"""Clean control 640 (expected clean).

The Grad-CAM of case 240 written as in the Keras example: one grad model
returns both the last conv activations and the prediction from the same call,
the class score is taken inside the tape, and no unconnected_gradients flag
is needed.
Setting: Keras 2 (tf_keras), Sequential CNN, eager GradientTape, gradient
w.r.t. an intermediate activation.
"""
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)


def create_simple_model(input_shape):
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(8, (3, 3), activation="relu", input_shape=input_shape, name="conv2d_1"),
        tf.keras.layers.MaxPooling2D((2, 2)),
        tf.keras.layers.Conv2D(8, (3, 3), activation="relu", name="conv2d_2"),
        tf.keras.layers.MaxPooling2D((2, 2)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(16, activation="tanh"),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(1),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Reshape((1,)),
    ])
    return model


def grad_cam(model, image_array):
    last_conv_layer = model.get_layer("conv2d_2")
    grad_model = tf.keras.Model(model.inputs, [last_conv_layer.output, model.output])
    img = image_array[np.newaxis, ...]
    with tf.GradientTape() as tape:
        last_conv_output, preds = grad_model(img)
        top_class_index = int(tf.argmax(preds[0]))
        class_channel = preds[:, top_class_index]
    grads = tape.gradient(class_channel, last_conv_output)
    assert grads is not None
    pooled_grads = tf.reduce_mean(grads, axis=(0, 1, 2))
    heatmap = tf.reduce_sum(last_conv_output[0] * pooled_grads, axis=-1)
    return heatmap


model = create_simple_model((22, 30, 1))
image_array = np.random.rand(22, 30, 1).astype("float32")
heatmap = grad_cam(model, image_array)
print("heatmap max:", float(tf.reduce_max(tf.abs(heatmap))))
