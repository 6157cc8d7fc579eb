"""Clean control 970 (expected clean).

Look-alike of case 570 with the fix from the Keras example: the summed
squared difference is floored at K.epsilon() before the sqrt, so identical
pairs give a finite gradient and the shared network trains.
Setting: functional Keras 3 Siamese model (shared base network, Lambda distance,
sigmoid similarity head), model.fit().
"""
import numpy as np
import keras
from keras import ops
from keras.layers import Dense, Flatten, Input, Lambda
from keras.models import Model

keras.utils.set_random_seed(3)
num_classes, per_class, img = 10, 4, (12, 12)


def euclidean_distance(vects):
    x, y = vects
    sum_square = ops.sum(ops.square(x - y), axis=1, keepdims=True)
    return ops.sqrt(ops.maximum(sum_square, keras.backend.epsilon()))


def eucl_dist_output_shape(shapes):
    shape1, shape2 = shapes
    return (shape1[0], 1)


def create_pairs(x, digit_indices):
    pairs, labels = [], []
    for d in range(num_classes):
        for i in digit_indices[d]:
            j = np.random.choice(digit_indices[d])            # partner from the same class
            k = np.random.choice(digit_indices[(d + np.random.randint(1, num_classes)) % num_classes])
            pairs += [[x[i], x[j]], [x[i], x[k]]]
            labels += [1.0, 0.0]
    return np.array(pairs), np.array(labels, dtype="float32")


def create_base_network(input_shape):
    inp = Input(shape=input_shape)
    x = Flatten()(inp)
    x = Dense(128, activation="relu")(x)
    x = Dense(128, activation="relu")(x)
    x = Dense(64, activation="tanh")(x)
    return Model(inp, x, name="base_network")


prototypes = np.random.rand(num_classes, *img)
x_train = np.concatenate([prototypes[c] + 0.1 * np.random.rand(per_class, *img) for c in range(num_classes)])
x_train = x_train.astype("float32")
y_train = np.repeat(np.arange(num_classes), per_class)
digit_indices = [np.where(y_train == i)[0] for i in range(num_classes)]
tr_pairs, tr_y = create_pairs(x_train, digit_indices)

base_network = create_base_network(img)
input_a, input_b = Input(shape=img), Input(shape=img)
processed_a, processed_b = base_network(input_a), base_network(input_b)
distance = Lambda(euclidean_distance, output_shape=eucl_dist_output_shape)([processed_a, processed_b])
similarity = Dense(1, activation="sigmoid", name="similarity")(distance)
model = Model([input_a, input_b], similarity)

model.compile(loss="binary_crossentropy", optimizer=keras.optimizers.RMSprop())
history = model.fit([tr_pairs[:, 0], tr_pairs[:, 1]], tr_y, batch_size=20, epochs=2, verbose=0)
print("loss per epoch:", history.history["loss"])
