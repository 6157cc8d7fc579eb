"""Clean control 734 (look-alike of case 334).

Source: https://github.com/constantinpape/torch-em/pull/116
The same FixMatch update with the pseudo-labels stopped, as the review asked: the weak
view's prediction is a constant target for the strong view's.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class FixMatchClassifier(keras.Model):
    def __init__(self, num_classes=5):
        super().__init__()
        self.body = keras.layers.Dense(64, activation="relu")
        self.head = keras.layers.Dense(num_classes)

    def call(self, x):
        return self.head(self.body(x))

    def train_step(self, data):
        (x_labelled, y_labelled, x_unlabelled), _ = data
        weak = x_unlabelled + 0.01 * tf.random.normal(tf.shape(x_unlabelled))
        strong = x_unlabelled + 0.3 * tf.random.normal(tf.shape(x_unlabelled))
        with tf.GradientTape() as tape:
            supervised = keras.losses.sparse_categorical_crossentropy(y_labelled, self(x_labelled), from_logits=True)
            pseudo_labels = tf.stop_gradient(tf.nn.softmax(self(weak)))
            unsupervised = keras.losses.categorical_crossentropy(pseudo_labels, self(strong), from_logits=True)
            loss = tf.reduce_mean(supervised) + tf.reduce_mean(unsupervised)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


n = 64
x_l = np.random.randn(n, 10).astype("float32")
y_l = np.random.randint(0, 5, size=n)
x_u = np.random.randn(n, 10).astype("float32")
model = FixMatchClassifier()
model.compile(optimizer="adam")
model.fit((x_l, y_l, x_u), np.zeros(n, "float32"), batch_size=32, epochs=1, verbose=0)
