"""Real-world case 288.

Source: https://github.com/google-research/simclr/issues/105
Bug: SimCLR fine-tuning (train_mode=finetune, ft_proj_selector=0) still runs the
projection head, but the supervised head is fed hiddens_list[0], the *input* of
the projection head, and the projection output is thrown away. The fine-tuning
loss therefore never reads the projection head, whose Dense and BatchNorm
variables are still in model.trainable_variables: their gradients are None and
TF warns "Gradients do not exist for variables ['projection_head/nl_0/...']".
Setting: eager GradientTape custom loop, Keras 3 subclassed model made of a
backbone sub-model, a projection-head layer and a supervised head.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
FT_PROJ_SELECTOR = 0  # fine-tune from the projection head input (the report's flag)


class ProjectionHead(layers.Layer):
    def __init__(self, num_layers=2, **kwargs):
        super().__init__(**kwargs)
        self.dense = [layers.Dense(16, use_bias=False, name=f"nl_{j}") for j in range(num_layers)]
        self.bn = [layers.BatchNormalization(name=f"bn_{j}") for j in range(num_layers)]

    def call(self, inputs, training=None):
        hiddens_list = [inputs]
        for dense, bn in zip(self.dense, self.bn):
            hiddens_list.append(tf.nn.relu(bn(dense(hiddens_list[-1]), training=training)))
        return hiddens_list[-1], hiddens_list[FT_PROJ_SELECTOR]


class SimCLRModel(keras.Model):
    def __init__(self, num_classes, **kwargs):
        super().__init__(**kwargs)
        self.resnet_model = keras.Sequential([
            layers.Conv2D(8, 3, strides=2, padding="same", activation="relu"),
            layers.GlobalAveragePooling2D(),
        ], name="resnet")
        self.projection_head = ProjectionHead(name="projection_head")
        self.supervised_head = layers.Dense(num_classes, name="head_supervised")

    def call(self, inputs, training=None):
        hiddens = self.resnet_model(inputs, training=training)
        projection_head_outputs, supervised_head_inputs = self.projection_head(hiddens, training=training)
        return self.supervised_head(supervised_head_inputs)  # finetune: projection output unused


model = SimCLRModel(num_classes=5, name="simclr")
optimizer = keras.optimizers.SGD(0.1, momentum=0.9)
images = np.random.rand(8, 16, 16, 3).astype("float32")
labels = np.random.randint(0, 5, size=(8,))
model(images)
for step in range(2):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    grads = tape.gradient(loss, model.trainable_variables)
    print("step", step, "loss", float(loss), "None:", [v.path for v, g in zip(model.trainable_variables, grads) if g is None])
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
