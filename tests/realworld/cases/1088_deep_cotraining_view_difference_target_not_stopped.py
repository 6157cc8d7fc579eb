"""Real-world case 1088.

Source: https://github.com/AlanChou/Deep-Co-Training-for-Semi-Supervised-Image-Recognition/issues/1
Bug: Deep Co-Training trains two networks on labelled and unlabelled data.
The view-difference loss makes each network agree with the other network's
clean prediction on the adversarial example built against that other
network: H(p1(x), p2(g1(x))) + H(p2(x), p1(g2(x))). The clean predictions
p1(x) and p2(x) are used as targets without detaching them ("why there is no
.detach() operation for the target tensor?" - the author: "A detach
operation is indeed needed"), so the loss also drags each network's clean
prediction towards the other network's prediction on the attack.
Setting: Keras 3 Sequential models, custom training loop under @tf.function, FGSM inputs from an inner tape, semi-supervised co-training.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)
FEAT, CLASSES, EPS = 16, 5, 0.05
LAMBDA_COT, LAMBDA_DIF = 1.0, 0.5


def build_net(name):
    return keras.Sequential([
        keras.Input((FEAT,)),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(CLASSES),
    ], name=name)


net1, net2 = build_net("net1"), build_net("net2")
optimizer = keras.optimizers.SGD(0.05, momentum=0.9)


def fgsm(net, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        logits = net(x)
        pseudo = tf.one_hot(tf.argmax(logits, axis=1), CLASSES)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(pseudo, logits))
    grad = tape.gradient(loss, x)
    return tf.stop_gradient(x + EPS * tf.sign(grad))


def entropy(p):
    return -tf.reduce_sum(p * tf.math.log(p + 1e-8), axis=1)


@tf.function
def train_step(x_l, y_l, x_u):
    adv1, adv2 = fgsm(net1, x_u), fgsm(net2, x_u)
    with tf.GradientTape() as tape:
        sup = (tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y_l, net1(x_l), from_logits=True))
               + tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y_l, net2(x_l), from_logits=True)))
        p1_u, p2_u = tf.nn.softmax(net1(x_u)), tf.nn.softmax(net2(x_u))
        cot = tf.reduce_mean(entropy((p1_u + p2_u) / 2) - (entropy(p1_u) + entropy(p2_u)) / 2)
        dif = (tf.reduce_mean(keras.losses.categorical_crossentropy(p1_u, net2(adv1), from_logits=True))
               + tf.reduce_mean(keras.losses.categorical_crossentropy(p2_u, net1(adv2), from_logits=True)))
        loss = sup + LAMBDA_COT * cot + LAMBDA_DIF * dif
    variables = net1.trainable_variables + net2.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return sup, cot, dif


x_lab = np.random.normal(size=(64, FEAT)).astype("float32")
y_lab = np.random.randint(0, CLASSES, size=(64,))
x_unl = np.random.normal(size=(256, FEAT)).astype("float32")
for step in range(5):
    idx = np.random.randint(0, 256, size=64)
    sup, cot, dif = train_step(x_lab, y_lab, tf.constant(x_unl[idx]))
print("sup", float(sup), "cot", float(cot), "dif", float(dif))
