"""Real-world case 473.

Source: https://github.com/tensorflow/tensorflow/pull/49488
Bug: the example proposed for tf.custom_gradient with a tf.Variable read inside the function
returns, for the variable, the local derivative d(poly)/d(weights) = [x, 1] summed over the
batch, without the upstream gradient dpoly. The reviewer: "Shouldn't this depend on dpoly?"
The input gradient (dpoly * weights[0]) is right; the variable's gradient is not the gradient
of the loss, so an MSE fit of the line drifts instead of converging.
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
            grad_vars.append(tf.reduce_sum(dy_dw, axis=1))
        return grad_xs, grad_vars

    return poly, grad_fn


x = tf.random.normal([64])
y = 3.0 * x - 2.0
for step in range(50):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(linear_poly(x) - y))
    (grad,) = tape.gradient(loss, [weights])
    weights.assign_sub(0.05 * grad)
