"""Clean control 662 (look-alike of case 262).

Source: https://github.com/keras-team/keras/issues/19150
The same two-head classifier with the custom loss calling the loss function
`sparse_categorical_crossentropy(..., ignore_class=-1)`, which is computed
from y_pred with differentiable ops, so the whole model trains.
Setting: Keras 2 (tf_keras) functional two-output model, custom loss for
both outputs, model.fit on a tf.data pipeline.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras.layers import Conv2D, Dense, GlobalAveragePooling2D, Input
from tf_keras.losses import sparse_categorical_crossentropy
from tf_keras.models import Model

tf.random.set_seed(0)
num_samples, num_classes1, num_classes2 = 32, 5, 3
input_shape = (16, 16, 3)

x_dummy = np.random.rand(num_samples, *input_shape).astype(np.float32)
y1_dummy = np.random.randint(-1, num_classes1, size=num_samples)
y2_dummy = np.random.randint(-1, num_classes2, size=num_samples)
dataset = tf.data.Dataset.from_tensor_slices((x_dummy, (y1_dummy, y2_dummy))).batch(batch_size=16)


def custom_loss(y_true, y_pred):
    loss = sparse_categorical_crossentropy(y_true, y_pred, ignore_class=-1)
    return loss


inputs = Input(shape=input_shape)
features = GlobalAveragePooling2D()(Conv2D(8, 3, activation="relu")(inputs))
output1 = Dense(num_classes1, activation="softmax", name="output1")(features)
output2 = Dense(num_classes2, activation="softmax", name="output2")(features)
model = Model(inputs=inputs, outputs=[output1, output2])
model.compile(optimizer=keras.optimizers.Adam(), loss=[custom_loss, custom_loss])
model.fit(dataset, epochs=1, verbose=0)
