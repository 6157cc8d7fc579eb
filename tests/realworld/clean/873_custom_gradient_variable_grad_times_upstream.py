"""Clean control 873 (look-alike of case 473).

Source: https://github.com/tensorflow/tensorflow/pull/49488
The example as merged after the review: the variable's gradient is the local derivative
[x, 1] weighted by the upstream gradient dpoly and reduced over the batch, so the custom
gradient agrees with autodiff and the MSE fit converges to the line.
Setting: plain tf.Variable, tf.custom_gradient whose grad_fn takes variables=..., eager
custom training loop with a manual SGD step (assign_sub).
"""
import tensorflow as tf

tf.random.set_seed(0)
weights = tf.Variable([1.0, 1.0], name="poly_weights")


@tf.custom_gradient
def linear_poly(x):
    poly = weights[0] * x + weights[1]

    def grad_fn(dpoly, variables=None):
        grad_xs = dpoly * weights[0]
        grad_vars = []
        for v in variables:
            dy_dw = tf.stack([x, tf.ones_like(x)])
            grad_vars.append(tf.reduce_sum(tf.reshape(dpoly, [1, -1]) * dy_dw, axis=1))
        return grad_xs, grad_vars

    return poly, grad_fn


x = tf.random.normal([64])
y = 3.0 * x - 2.0
for step in range(50):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(linear_poly(x) - y))
    (grad,) = tape.gradient(loss, [weights])
    assert bool(tf.reduce_all(tf.math.is_finite(grad)))
    weights.assign_sub(0.05 * grad)
assert abs(float(weights[0]) - 3.0) < 0.1 and abs(float(weights[1]) + 2.0) < 0.1, weights.numpy()
