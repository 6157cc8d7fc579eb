"""Real-world case 1001.

Source: https://github.com/PAIR-code/saliency/issues/88
Bug: adapting the PAIR saliency example to their own grayscale CNN, the user
replaced `model(images)` by `model.predict(images)` inside
`call_model_function` because the call had failed for them. `predict` returns
a NumPy array, so the class score the tape differentiates is a constant and
the vanilla-gradient saliency map w.r.t. the watched input images is None.
Setting: gradients w.r.t. inputs (saliency), eager GradientTape, Keras 3.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

model = keras.Sequential([
    keras.Input(shape=(32, 32, 1)),
    layers.Conv2D(8, 3, activation="relu"),
    layers.MaxPooling2D(),
    layers.Conv2D(16, 3, activation="relu"),
    layers.GlobalAveragePooling2D(),
    layers.Dense(3, activation="softmax"),
])

class_idx_str = "class_idx_str"
INPUT_OUTPUT_GRADIENTS = "INPUT_OUTPUT_GRADIENTS"


def call_model_function(images, call_model_args=None, expected_keys=None):
    target_class_idx = call_model_args[class_idx_str]
    images = tf.convert_to_tensor(images)
    with tf.GradientTape() as tape:
        if expected_keys == [INPUT_OUTPUT_GRADIENTS]:
            tape.watch(images)
            output_layer = model.predict(images, verbose=0)
            output_layer = tf.gather(output_layer, target_class_idx, axis=1)
            gradients = tape.gradient(output_layer, images)
            return {INPUT_OUTPUT_GRADIENTS: gradients}


rng = np.random.default_rng(0)
im = rng.uniform(0, 1, size=(32, 32, 1)).astype("float32")
prediction_class = int(np.argmax(model(im[None])[0]))
call_model_args = {class_idx_str: prediction_class}
result = call_model_function(im[None], call_model_args, [INPUT_OUTPUT_GRADIENTS])
grads = result[INPUT_OUTPUT_GRADIENTS]
if grads is None:
    print("None gradients for: ['images']")
else:
    saliency_map = np.sum(np.abs(grads.numpy()[0]), axis=-1)
    print("saliency map:", saliency_map.shape, float(saliency_map.max()))
