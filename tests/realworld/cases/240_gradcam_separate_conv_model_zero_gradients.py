"""Real-world case 240.

Source: https://github.com/tensorflow/tensorflow/issues/62797
Bug: a Grad-CAM for a small regression CNN gets the last conv activations from
one model call and the prediction from a second, separate call of the full
model, and indexes the prediction inside the tape.gradient call, after the tape
closed; the target is not connected to the watched activations, so the
gradient is None. The maintainers' reply suggests passing
unconnected_gradients=ZERO, which only turns the None into an all-zero heatmap.
Setting: Keras 2 (tf_keras, TF 2.8 in the report), Sequential CNN, eager
GradientTape, gradient w.r.t. an intermediate activation.
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
    last_conv_layer_model = tf.keras.Model(model.inputs, last_conv_layer.output)
    img = image_array[np.newaxis, ...]
    with tf.GradientTape() as tape:
        last_conv_output = last_conv_layer_model(img)
        tape.watch(last_conv_output)
        preds = model(img)
        top_class_index = int(tf.argmax(preds[0]))
    grads = tape.gradient(preds[:, top_class_index], last_conv_output,
                          unconnected_gradients=tf.UnconnectedGradients.ZERO)
    pooled_grads = tf.reduce_mean(grads, axis=(0, 1, 2))
    heatmap = tf.reduce_sum(last_conv_output[0] * pooled_grads, axis=-1)
    return heatmap


model = create_simple_model((22, 30, 1))
image_array = np.random.rand(22, 30, 1).astype("float32")
heatmap = grad_cam(model, image_array)
print("heatmap max:", float(tf.reduce_max(tf.abs(heatmap))))
