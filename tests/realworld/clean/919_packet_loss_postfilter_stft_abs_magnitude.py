"""Clean control 919 (expected clean).

The packet-loss post-filter of case 519 with the STFT magnitude taken by tf.abs on the complex
spectrum (TensorFlow's ComplexAbs gradient divides with div_no_nan, so an all-zero frame of the
filtered signal contributes a zero, not a NaN); the lost packets still give exactly-zero frames,
and the FIR taps and the gain get finite gradients at every step.
Setting: low-level TF (tf.Module, raw tf.Variable, tf.signal.stft, eager GradientTape, manual SGD).
"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
batch, length, packet = 4, 2048, 256
t = np.arange(length)
clean = np.stack([np.sin(2 * np.pi * (0.01 + 0.02 * i) * t) + 0.5 * np.sin(2 * np.pi * 0.13 * t)
                  for i in range(batch)]).astype(np.float32)
received = clean + 0.1 * rng.normal(size=clean.shape).astype(np.float32)
for i in range(batch):
    lost = int(rng.integers(0, length // packet - 1))
    received[i, lost * packet:(lost + 2) * packet] = 0.0


class PostFilter(tf.Module):
    def __init__(self, n_taps=15):
        super().__init__(name="post_filter")
        init = np.zeros(n_taps, np.float32)
        init[n_taps // 2] = 1.0
        self.taps = tf.Variable(init + 0.01 * rng.normal(size=n_taps).astype(np.float32), name="fir_taps")
        self.gain = tf.Variable(1.0, name="output_gain")

    def __call__(self, x):
        y = tf.nn.conv1d(x[..., None], self.taps[:, None, None], stride=1, padding="SAME")[..., 0]
        return self.gain * y


def magnitude(signal):
    spec = tf.signal.stft(signal, frame_length=256, frame_step=128)
    return tf.abs(spec)


model = PostFilter()
for step in range(2):
    with tf.GradientTape() as tape:
        enhanced = model(received)
        loss = tf.reduce_mean(tf.abs(magnitude(enhanced) - magnitude(clean)))
    grads = tape.gradient(loss, model.trainable_variables)
    print("step", step, "loss", float(loss))
    for var, grad in zip(model.trainable_variables, grads):
        finite = bool(np.isfinite(grad.numpy()).all())
        print("  ", var.name, "finite gradient:", finite, "norm", float(tf.norm(grad)))
        var.assign_sub(0.01 * grad)
