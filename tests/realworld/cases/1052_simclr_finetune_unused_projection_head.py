"""Real-world case 1052.

Source: https://github.com/google-research/simclr/issues/182
Bug: fine-tuning a SimCLR v2 model (tf2/ code, MirroredStrategy custom loop).
In finetune mode the supervised head reads `hiddens_list[ft_proj_selector]`
with ft_proj_selector=0, i.e. the *input* of the projection head, but the
projection head is still built, run, and its variables are still in
`model.trainable_variables`; none of them reach the supervised loss, so every
step warns "Gradients do not exist for variables ['projection_head/...']".
Setting: tf.distribute.MirroredStrategy custom loop, subclassed Keras 3 model.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRAIN_MODE = "finetune"
FT_PROJ_SELECTOR = 0
NUM_PROJ_LAYERS = 3
NUM_CLASSES = 10
BATCH = 16


class LinearLayer(layers.Layer):
    def __init__(self, num_classes, use_bias=True, use_bn=False, name="linear_layer", **kwargs):
        super().__init__(name=name, **kwargs)
        self.dense = layers.Dense(num_classes, use_bias=use_bias and not use_bn)
        self.bn_relu = layers.BatchNormalization(center=use_bias) if use_bn else None

    def call(self, inputs, training=False):
        x = self.dense(inputs)
        if self.bn_relu is not None:
            x = self.bn_relu(x, training=training)
        return x


class ProjectionHead(layers.Layer):
    def __init__(self, proj_out_dim=32, **kwargs):
        super().__init__(name="projection_head", **kwargs)
        self.linear_layers = []
        for j in range(NUM_PROJ_LAYERS):
            last = j == NUM_PROJ_LAYERS - 1
            self.linear_layers.append(
                LinearLayer(proj_out_dim if last else 64, use_bias=not last, use_bn=True, name="nl_%d" % j))

    def call(self, inputs, training=False):
        hiddens_list = [tf.identity(inputs, "proj_head_input")]
        for j in range(NUM_PROJ_LAYERS):
            hiddens = self.linear_layers[j](hiddens_list[-1], training=training)
            if j != NUM_PROJ_LAYERS - 1:
                hiddens = tf.nn.relu(hiddens)
            hiddens_list.append(hiddens)
        proj_head_output = tf.identity(hiddens_list[-1], "proj_head_output")
        return proj_head_output, hiddens_list[FT_PROJ_SELECTOR]


class SupervisedHead(layers.Layer):
    def __init__(self, num_classes, **kwargs):
        super().__init__(name="head_supervised", **kwargs)
        self.linear_layer = LinearLayer(num_classes)

    def call(self, inputs, training=False):
        return tf.identity(self.linear_layer(inputs, training=training), name="logits_sup")


class Model(keras.Model):
    def __init__(self, num_classes, **kwargs):
        super().__init__(**kwargs)
        self.resnet_model = keras.Sequential([
            layers.Conv2D(16, 3, padding="same", activation="relu"),
            layers.Conv2D(32, 3, strides=2, padding="same", activation="relu"),
            layers.GlobalAveragePooling2D(),
        ], name="resnet")
        self._projection_head = ProjectionHead()
        self.supervised_head = SupervisedHead(num_classes)

    def call(self, inputs, training=False):
        hiddens = self.resnet_model(inputs, training=training)
        projection_head_outputs, supervised_head_inputs = self._projection_head(hiddens, training=training)
        if TRAIN_MODE == "finetune":
            supervised_head_outputs = self.supervised_head(supervised_head_inputs, training=training)
            return None, supervised_head_outputs
        return projection_head_outputs, None


strategy = tf.distribute.MirroredStrategy()
rng = np.random.default_rng(0)
classes = rng.integers(0, NUM_CLASSES, 64)
class_colors = rng.normal(size=(NUM_CLASSES, 3)).astype("float32")
images = (rng.normal(size=(64, 16, 16, 3)) + 2.0 * class_colors[classes][:, None, None, :]).astype("float32")
labels = np.eye(NUM_CLASSES, dtype="float32")[classes]
ds = tf.data.Dataset.from_tensor_slices((images, labels)).repeat().batch(BATCH)
ds = strategy.experimental_distribute_dataset(ds)

with strategy.scope():
    model = Model(NUM_CLASSES)
    model(tf.zeros((1, 16, 16, 3)))  # build the variables under the strategy scope
    optimizer = keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
    optimizer.build(model.trainable_variables)

    @tf.function
    def train_multiple_steps(iterator):
        def single_step(features, labels):
            with tf.GradientTape() as tape:
                _, supervised_head_outputs = model(features, training=True)
                sup_loss = tf.nn.softmax_cross_entropy_with_logits(labels, supervised_head_outputs)
                loss = tf.nn.compute_average_loss(sup_loss, global_batch_size=BATCH)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        features, labels = next(iterator)
        per_replica = strategy.run(single_step, args=(features, labels))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    iterator = iter(ds)
    for step in range(12):
        print("step", step, "loss", float(train_multiple_steps(iterator)))
