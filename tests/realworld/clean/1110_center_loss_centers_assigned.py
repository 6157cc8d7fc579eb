"""Real-world control 1110 (twin of case 1090).

Source: https://github.com/keras-team/keras/issues/13941
Fixed: the TF 2 way: the layer assigns the new centers itself
(`self.class_centers.assign(new_centers)`, after the loss term has read
the current centers) instead of passing a (variable, value) tuple to the
deprecated `add_update`, so the centers follow their class features.
Setting: tf_keras (Keras 2) functional two-output model, model.fit with a pass-through loss, metric learning.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import layers
import tf_keras.backend as K

np.random.seed(0)
tf.random.set_seed(0)
keras.utils.set_random_seed(0)
FEAT, CLASSES = 20, 4


class CenterLossLayer(layers.Layer):
    def __init__(self, alpha=0.5, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha

    def build(self, input_shape):
        self.class_centers = self.add_weight(
            name="class_centers", shape=(input_shape[1][1], input_shape[0][1]),
            initializer="uniform", trainable=False)
        super().build(input_shape)

    def call(self, x, mask=None):
        embeddings, one_hots = x
        delta_centers = K.dot(K.transpose(one_hots), K.dot(one_hots, self.class_centers) - embeddings)
        center_counts = K.sum(K.transpose(one_hots), axis=1, keepdims=True) + 1
        new_centers = self.class_centers - self.alpha * delta_centers / center_counts
        result = embeddings - K.dot(one_hots, self.class_centers)
        loss = K.sum(result ** 2, axis=1, keepdims=True)
        self.class_centers.assign(tf.stop_gradient(new_centers))
        return loss


inputs = keras.Input((FEAT,))
labels_in = keras.Input((CLASSES,))
h = layers.Dense(32, activation="relu")(inputs)
embeddings = layers.Dense(2, name="embedding")(h)
main_out = layers.Dense(CLASSES, activation="softmax", name="main_out")(embeddings)
center_out = CenterLossLayer(name="centerlosslayer")([embeddings, labels_in])
model = keras.Model([inputs, labels_in], [main_out, center_out])
model.compile(optimizer=keras.optimizers.SGD(0.05),
              loss=["categorical_crossentropy", lambda y_true, y_pred: y_pred],
              loss_weights=[1.0, 0.1])

x = np.random.normal(size=(256, FEAT)).astype("float32")
y = keras.utils.to_categorical(np.random.randint(0, CLASSES, size=256), CLASSES)
centers_before = model.get_layer("centerlosslayer").class_centers.numpy().copy()
model.fit([x, y], [y, np.zeros((256, 1))], batch_size=32, epochs=2, verbose=0)
moved = np.abs(model.get_layer("centerlosslayer").class_centers.numpy() - centers_before).max()
print("class centers moved:", float(moved))
