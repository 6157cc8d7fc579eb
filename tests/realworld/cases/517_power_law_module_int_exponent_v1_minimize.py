"""Real-world case 517.

Source: https://github.com/tensorflow/tensorflow/issues/43845
Bug: '"No gradients provided" with GradientDescentOptimizer if not using float variable': a
variable created from a Python int (tf.Variable(1)) is int32, the tape refuses to watch it
("The dtype of the watched tensor must be floating") and the optimizer gets no gradient for it;
the int literal that set the dtype is the mistake (a maintainer in tensorflow#27378: "your
variables are of integer types (because you initialize them with integers)").
Here a power-law decay curve counts(t) = amplitude * t ** -exponent is fitted with a tf.Module
whose __call__ is a tf.function with an input_signature, minimised by a compat.v1
GradientDescentOptimizer with a loss callable: the amplitude trains, the exponent never moves.
Setting: low-level TF (tf.Module, raw tf.Variable, tf.function input_signature, compat.v1 minimize).
"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
t = np.linspace(1.0, 10.0, 64).astype("float32")
counts = (50.0 * t ** -1.5 * rng.lognormal(0.0, 0.05, 64)).astype("float32")


class PowerLawDecay(tf.Module):
    def __init__(self):
        super().__init__(name="power_law")
        self.amplitude = tf.Variable(40.0, name="amplitude")
        self.exponent = tf.Variable(1, name="exponent")

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def __call__(self, t):
        return self.amplitude * tf.pow(t, -tf.cast(self.exponent, tf.float32))


model = PowerLawDecay()
optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.05)


def loss_fn():
    log_pred = tf.math.log(model(tf.constant(t)))
    return tf.reduce_mean(tf.square(log_pred - tf.math.log(counts)))


for step in range(100):
    optimizer.minimize(loss_fn, var_list=model.trainable_variables)

for grad, var in optimizer.compute_gradients(loss_fn, var_list=model.trainable_variables):
    print(var.name, "gradient:", None if grad is None else float(grad))
print("amplitude", model.amplitude.numpy(), "exponent", model.exponent.numpy(), "(true 50, 1.5)")
