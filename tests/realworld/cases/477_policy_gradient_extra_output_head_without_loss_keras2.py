"""Real-world case 477.

Source: https://github.com/keras-team/keras/issues/4746
Bug: a policy-gradient network (functional API, softmax head 'actions_probs') trains with a
hand-written loss -sum(log(pi(a|s)) * scale); "as soon as I add an extra head (output) to it,
then I get the 'An operation has None for gradient' error. Everything is working fine before
adding the extra output." The loss only reads the first output; the new head's kernel and
bias are not on the loss's path, so their gradients are None (tf.keras warns "Gradients do
not exist for variables").
Setting: tf.keras (Keras 2) functional two-output model, eager custom training loop over
episodes with one-hot actions and discounted-return scales.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Dense, Input
from tensorflow.keras.models import Model

np.random.seed(0)
tf.random.set_seed(0)
OBS_SIZE, HIDDEN_UNITS, N_ACTIONS = 4, 32, 2

inputs = Input(shape=(OBS_SIZE,))
x = Dense(units=HIDDEN_UNITS, activation="relu", use_bias=True, name="l2")(inputs)
x = Dense(units=HIDDEN_UNITS, activation="relu", use_bias=True, name="l3")(x)
actions_probs = Dense(units=N_ACTIONS, activation="softmax", use_bias=False, name="actions_probs")(x)
state_value = Dense(units=1, activation=None, name="state_value")(x)
nn = Model(inputs=inputs, outputs=[actions_probs, state_value])
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)


def train(observations, actions_1hot, actions_scales):
    with tf.GradientTape() as tape:
        actions_probs, _ = nn(observations)
        picked = tf.reduce_sum(actions_probs * actions_1hot, axis=1)
        loss = -tf.reduce_sum(tf.math.log(picked) * actions_scales)
    grads = tape.gradient(loss, nn.trainable_weights)
    optimizer.apply_gradients(zip(grads, nn.trainable_weights))
    return loss


for episode in range(3):
    observations = np.random.randn(25, OBS_SIZE).astype("float32")
    actions = np.random.randint(0, N_ACTIONS, 25)
    returns = np.cumsum(np.ones(25))[::-1].astype("float32")
    scales = (returns - returns.mean()) / returns.std()
    train(observations, np.eye(N_ACTIONS, dtype="float32")[actions], scales)
