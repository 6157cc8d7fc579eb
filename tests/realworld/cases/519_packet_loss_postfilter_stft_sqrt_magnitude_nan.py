"""Real-world case 519.

Source: https://github.com/speechbrain/speechbrain/issues/181
Bug: "Spectral magnitude makes NaN when using power=0.5": an enhancement loss compares STFT
magnitudes of the enhanced and the clean signal, the magnitude is the square root of
real**2 + imag**2, and where a frame of the enhanced signal is all zeros sqrt is differentiated
at 0 (0.5 / sqrt(0) = inf, times the zero from d(re**2) = 2 * re: NaN), so the loss goes NaN
(the same sqrt-at-zero NaN in TensorFlow: tensorflow/tensorflow#4914).
Here a receiver-side post-filter (raw tf.Variable FIR taps and gain in a tf.Module) is trained
with an L1 spectral-magnitude loss against the clean speech; lost packets arrive as runs of zeros,
so some tf.signal.stft frames of the filtered signal are exactly zero while the clean frames are
not, and every parameter's gradient is NaN (the next step's loss is NaN).
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
    return tf.sqrt(tf.math.real(spec) ** 2 + tf.math.imag(spec) ** 2)


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
