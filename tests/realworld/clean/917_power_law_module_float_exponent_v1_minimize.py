"""Clean control 917 (expected clean).

The power-law fit of case 517 with the exponent created as a float variable
(tf.Variable(1.0)), so the tape watches it and the compat.v1 GradientDescentOptimizer's
minimize (loss callable) updates both the amplitude and the exponent.
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
        self.exponent = tf.Variable(1.0, name="exponent")

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def __call__(self, t):
        return self.amplitude * tf.pow(t, -self.exponent)


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
