"""Real-world case 1059.

Source: https://github.com/tensorflow/tensorflow/issues/42602
Bug: an L1-style magnitude is computed as sqrt(square(v)) inside a
tf.function. One entry of the variable is exactly 0, so the backward pass of
sqrt at 0 is inf and inf * d(square)/dv = inf * 0 = NaN: the loss is finite
(0.5) but the variable's gradient is NaN, and after one optimizer step the
variable and every later loss are NaN. (The reporter's eager variant looked
fine only because `x = tf.square(x)` rebinds the Python name, so the eager
gradient was taken with respect to an intermediate tensor, not the variable.)
Setting: tf.function helper inside an eager GradientTape loop, tf.Variable.
"""
import tensorflow as tf


@tf.function  # Happens in both eager and graph
def fun(v):
    v = tf.square(v)
    v = tf.sqrt(v)
    return tf.reduce_sum(v, axis=-1)


x = tf.Variable([[1.0, 0.0]], name="x")
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)

for step in range(3):
    with tf.GradientTape() as tape:
        z = fun(x)
        loss = tf.nn.l2_loss(z)
    grads = tape.gradient(loss, [x])
    optimizer.apply_gradients(zip(grads, [x]))
    tf.print("step", step, "loss", loss, "x", x)
