"""Clean control 1079 (expected clean).

Twin of case 1059: the magnitude is computed as sqrt(square(v) + 1e-12), so
the backward pass of sqrt never sees an exact 0 and the gradient of the
variable stays finite while the loss decreases.
Setting: tf.function helper inside an eager GradientTape loop, tf.Variable.
"""
import tensorflow as tf


@tf.function  # Happens in both eager and graph
def fun(v):
    v = tf.square(v)
    v = tf.sqrt(v + 1e-12)
    return tf.reduce_sum(v, axis=-1)


x = tf.Variable([[1.0, 0.0]], name="x")
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)

for step in range(5):
    with tf.GradientTape() as tape:
        z = fun(x)
        loss = tf.nn.l2_loss(z)
    grads = tape.gradient(loss, [x])
    optimizer.apply_gradients(zip(grads, [x]))
    tf.print("step", step, "loss", loss, "x", x)
