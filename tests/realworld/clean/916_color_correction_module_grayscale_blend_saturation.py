"""Clean control 916 (expected clean).

The colour-correction module of case 516 with the saturation written as a composite of plain,
differentiable ops (blend each pixel with its luma: gray + s * (rgb - gray), as PIL's
ImageEnhance.Color does) instead of tf.image.adjust_saturation's raw AdjustSaturation kernel;
the white-balance gains and the saturation factor both get gradients.
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
        luma = tf.image.rgb_to_grayscale(balanced)
        return luma + self.saturation * (balanced - luma)


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
