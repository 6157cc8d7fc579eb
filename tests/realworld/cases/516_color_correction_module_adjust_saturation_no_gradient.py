"""Real-world case 516.

Source: https://github.com/tensorflow/tensorflow/issues/126083
Bug: "tf.image.adjust_hue, adjust_saturation and adjust_contrast cannot be differentiated (no
registered gradients)": the Python wrappers call the raw AdjustSaturation kernel, which has no
gradient function, so differentiating through it raises "LookupError: gradient registry has no
entry for: AdjustSaturation" (adjust_brightness works because it is a composite of plain ops).
Here a learned colour-correction stage (white-balance gains, then a saturation factor) is a
tf.Module with raw tf.Variable parameters, trained by a tf.function step with an input_signature
and a hand-written SGD update; the saturation op sits between the loss and both parameters.
Setting: low-level TF (tf.Module, raw tf.Variable, tf.function with input_signature, tf.image).
"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
raw = (rng.random((8, 16, 16, 3)) * 0.6 + 0.2).astype("float32")
gray = raw.mean(axis=-1, keepdims=True)
target = np.clip(gray + 1.4 * (raw - gray), 0.0, 1.0) * np.array([1.05, 1.0, 0.9], "float32")


class ColorCorrector(tf.Module):
    """White balance (per-channel gains) followed by a learned saturation factor."""

    def __init__(self):
        super().__init__(name="color_corrector")
        self.gains = tf.Variable(tf.ones([3]), name="wb_gains")
        self.saturation = tf.Variable(1.0, name="saturation")

    def __call__(self, images):
        balanced = images * self.gains
        return tf.image.adjust_saturation(balanced, self.saturation)


model = ColorCorrector()
image_spec = tf.TensorSpec([None, 16, 16, 3], tf.float32)


@tf.function(input_signature=[image_spec, image_spec])
def train_step(images, targets):
    with tf.GradientTape() as tape:
        corrected = model(images)
        loss = tf.reduce_mean(tf.square(corrected - targets))
    grads = tape.gradient(loss, model.trainable_variables)
    for var, grad in zip(model.trainable_variables, grads):
        var.assign_sub(0.5 * grad)
    return loss


for step in range(3):
    print("step", step, "loss", float(train_step(raw, target)))
print("gains", model.gains.numpy(), "saturation", model.saturation.numpy())
