"""Real-world case 334.

Source: https://github.com/constantinpape/torch-em/pull/116
Bug: in a FixMatch self-training update the pseudo-labels come from the model itself on a
weakly augmented view and supervise its prediction on a strongly augmented view; the
review: "The most important thing to address is making sure that pseudo labels are not
used in gradient computation." Without a stop-gradient the loss also pulls the
pseudo-labels towards the strong view's prediction, a target that moves with the student.
Setting: Keras 3 subclassed classifier, custom train_step (model.fit) on labelled and
unlabelled batches, the pseudo-label probabilities used as soft cross-entropy labels.
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
            pseudo_labels = tf.nn.softmax(self(weak))
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
