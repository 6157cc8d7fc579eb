"""Real-world case 765.

Source: https://github.com/keras-team/keras/issues/2001
Bug: the images of the siamese MNIST example are standardized per pixel,
(X - X.mean(0)) / X.std(0), before the pairs are built.  The border pixels are
0 in every image, so their std is 0 and 0 / 0 puts NaN into every input row;
the batches fed to train_on_batch already hold NaN and the contrastive loss
is NaN from the first batch.
Setting: Keras 3 functional siamese network (shared base network, Lambda
distance), custom mini-batch loop with train_on_batch.
"""
import numpy as np
import keras
from keras import layers, ops

rng = np.random.default_rng(0)
n_classes, per_class = 10, 40
digits = np.zeros((n_classes * per_class, 28, 28), dtype="float32")
labels = np.repeat(np.arange(n_classes), per_class)
prototypes = rng.random((n_classes, 20, 20)).astype("float32")
for i, c in enumerate(labels):
    digits[i, 4:24, 4:24] = np.clip(prototypes[c] + 0.2 * rng.normal(size=(20, 20)), 0, 1)
X = digits.reshape(-1, 784)
X = (X - X.mean(axis=0)) / X.std(axis=0)


def create_pairs(x, labels):
    pairs, y = [], []
    for i in range(len(x)):
        same = rng.choice(np.flatnonzero(labels == labels[i]))
        diff = rng.choice(np.flatnonzero(labels != labels[i]))
        pairs += [[x[i], x[same]], [x[i], x[diff]]]
        y += [1.0, 0.0]
    return np.array(pairs, dtype="float32"), np.array(y, dtype="float32")


def create_base_network(input_dim):
    inp = keras.Input(shape=(input_dim,))
    h = layers.Dense(128, activation="tanh")(inp)
    h = layers.Dropout(0.1)(h)
    h = layers.Dense(128, activation="tanh")(h)
    h = layers.Dropout(0.1)(h)
    h = layers.Dense(128, activation="tanh")(h)
    return keras.Model(inp, h, name="base_network")


def euclidean_distance(vects):
    x, y = vects
    return ops.sqrt(ops.sum(ops.square(x - y), axis=1, keepdims=True))


def contrastive_loss(y_true, y_pred):
    margin = 1.0
    return ops.mean(y_true * ops.square(y_pred) + (1 - y_true) * ops.square(ops.maximum(margin - y_pred, 0)))


tr_pairs, tr_y = create_pairs(X, labels)
base_network = create_base_network(784)
input_a = keras.Input(shape=(784,), name="input_a")
input_b = keras.Input(shape=(784,), name="input_b")
distance = layers.Lambda(euclidean_distance, output_shape=(1,))([base_network(input_a), base_network(input_b)])
model = keras.Model([input_a, input_b], distance, name="siamese")
model.compile(loss=contrastive_loss, optimizer=keras.optimizers.RMSprop())

batch_size = 128
x = np.zeros((batch_size, 784), dtype="float32")
y = np.zeros((batch_size, 784), dtype="float32")
l = np.zeros((batch_size, 1), dtype="float32")
nsamples = len(tr_pairs)
for epoch in range(2):
    shuf = rng.permutation(nsamples)
    for k in range(nsamples // batch_size):
        sh = shuf[k * batch_size:(k + 1) * batch_size]
        for s in range(batch_size):
            x[s] = tr_pairs[sh[s], 0]
            y[s] = tr_pairs[sh[s], 1]
            l[s] = tr_y[sh[s]]
        tt = model.train_on_batch([x, y], l)
    print("epoch", epoch, "loss", tt)
