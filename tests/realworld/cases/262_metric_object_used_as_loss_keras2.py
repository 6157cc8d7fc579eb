"""Real-world case 262.

Source: https://github.com/keras-team/keras/issues/19150
Bug: to ignore the label -1 in a two-head classifier, the custom loss calls
a `keras.metrics.SparseCategoricalCrossentropy(ignore_class=-1)` object; a
metric's __call__ accumulates into its total/count variables (assign_add)
and returns their ratio, a value read back from variables, so no gradient
reaches the model: "No gradients provided for any variable" (the
`losses.sparse_categorical_crossentropy` function works).
Setting: Keras 2 (tf_keras) functional two-output model, custom loss for
both outputs, model.fit on a tf.data pipeline.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras.layers import Conv2D, Dense, GlobalAveragePooling2D, Input
from tf_keras.models import Model

tf.random.set_seed(0)
num_samples, num_classes1, num_classes2 = 32, 5, 3
input_shape = (16, 16, 3)

x_dummy = np.random.rand(num_samples, *input_shape).astype(np.float32)
y1_dummy = np.random.randint(-1, num_classes1, size=num_samples)
y2_dummy = np.random.randint(-1, num_classes2, size=num_samples)
dataset = tf.data.Dataset.from_tensor_slices((x_dummy, (y1_dummy, y2_dummy))).batch(batch_size=16)

sparse_cc = keras.metrics.SparseCategoricalCrossentropy(from_logits=False, ignore_class=-1)


def custom_loss(y_true, y_pred):
    loss = sparse_cc(y_true, y_pred)
    return loss


inputs = Input(shape=input_shape)
features = GlobalAveragePooling2D()(Conv2D(8, 3, activation="relu")(inputs))
output1 = Dense(num_classes1, activation="softmax", name="output1")(features)
output2 = Dense(num_classes2, activation="softmax", name="output2")(features)
model = Model(inputs=inputs, outputs=[output1, output2])
model.compile(optimizer=keras.optimizers.Adam(), loss=[custom_loss, custom_loss])
model.fit(dataset, epochs=1, verbose=0)
