"""Real-world case 250.

Source: https://github.com/tensorflow/addons/issues/2266
Bug: a conv net predicts a flow field that warps the image with
dense_image_warp; the @tf.function helper first quantises the flow with
tf.math.floor(flows * denorm), whose gradient is None, so "the gradients
returned for all variables are None".
Setting: Keras 3 Sequential, eager GradientTape around a @tf.function helper
(tfa.image.dense_image_warp replaced by an equivalent bilinear warp written
with differentiable TF ops, since tensorflow_addons is gone).
"""
import keras
import tensorflow as tf

tf.random.set_seed(0)


def dense_image_warp(image, flow):
    """Bilinear warp, output[b, i, j] = image[b, i - flow[..., 0], j - flow[..., 1]]."""
    h, w = image.shape[1], image.shape[2]
    rows = tf.range(h, dtype=tf.float32)
    cols = tf.range(w, dtype=tf.float32)
    query_y = rows[None, :, None] - flow[..., 0]
    query_x = cols[None, None, :] - flow[..., 1]
    weight_y = tf.nn.relu(1.0 - tf.abs(query_y[..., None] - rows))
    weight_x = tf.nn.relu(1.0 - tf.abs(query_x[..., None] - cols))
    return tf.einsum("bijy,bijx,byxc->bijc", weight_y, weight_x, image)


@tf.function
def image_warp(images, flows):
    h, w = images.shape[1:3]
    denorm = w / 10.0
    flows = tf.image.resize(flows, (h, w))
    flows = tf.math.floor(flows * denorm)
    return dense_image_warp(images, flows)


model = keras.Sequential([keras.Input((16, 16, 3)), keras.layers.Conv2D(2, (3, 3), strides=(2, 2))])

x, y = tf.random.normal((1, 16, 16, 3)), tf.ones((1, 16, 16, 3))

with tf.GradientTape() as tape:
    pf = model(x)
    p = image_warp(x, pf)
    loss = tf.reduce_mean(keras.losses.mean_absolute_error(y, p))

grads = tape.gradient(loss, model.trainable_variables)
print("gradients:", grads)
