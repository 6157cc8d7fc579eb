"""Real-world case 533.

Source: https://github.com/tensorflow/tensorflow/issues/43845
Bug: neural style transfer by input optimisation. The image being optimised is
created as tf.Variable(content) straight from the decoded photo, so it inherits
the photo's uint8 dtype. The step casts it to float32 before the frozen feature
extractor, and the Gram-matrix style loss plus the content loss are fine, but a
GradientTape never watches an integer variable and no gradient exists for one:
tape.gradient returns None and Adam raises "No gradients provided for any
variable" (as in the report, where the optimised variable was an integer).
Setting: Keras 3 frozen functional feature extractor, tf.Variable image as the
only source, @tf.function train step, keras.optimizers.Adam.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

H = W = 16
STYLE_WEIGHT = 1e4
CONTENT_WEIGHT = 1e3


def load_photo(seed):
    # stands in for np.asarray(PIL.Image.open(path).resize((W, H)))[None]
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(1, H, W, 3), dtype=np.uint8)


def build_feature_extractor():
    inp = keras.Input((H, W, 3))
    x = layers.Rescaling(1.0 / 127.5, offset=-1.0)(inp)
    block1 = layers.Conv2D(8, 3, padding="same", activation="relu", name="block1_conv")(x)
    block2 = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu", name="block2_conv")(block1)
    model = keras.Model(inp, [block1, block2], name="features")
    model.trainable = False
    return model


def gram_matrix(feature_map):
    gram = tf.einsum("bijc,bijd->bcd", feature_map, feature_map)
    n = tf.cast(tf.shape(feature_map)[1] * tf.shape(feature_map)[2], tf.float32)
    return gram / n


keras.utils.set_random_seed(0)
extractor = build_feature_extractor()
content = load_photo(1)
style = load_photo(2)
style_grams = [gram_matrix(f) for f in extractor(style.astype("float32"))]
content_target = extractor(content.astype("float32"))[1]


def style_content_loss(features):
    style_loss = tf.add_n([tf.reduce_mean(tf.square(gram_matrix(f) - g))
                           for f, g in zip(features, style_grams)])
    content_loss = tf.reduce_mean(tf.square(features[1] - content_target))
    return STYLE_WEIGHT * style_loss + CONTENT_WEIGHT * content_loss


image = tf.Variable(content, name="stylised_image")
optimizer = keras.optimizers.Adam(learning_rate=2.0)


@tf.function
def train_step():
    with tf.GradientTape() as tape:
        features = extractor(tf.cast(image, tf.float32))
        loss = style_content_loss(features)
    grad = tape.gradient(loss, image)
    optimizer.apply_gradients([(grad, image)])
    return loss


for step in range(3):
    print("step", step, "loss", float(train_step()))
