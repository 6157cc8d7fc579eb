"""Clean control 877 (look-alike of case 477).

Source: https://github.com/keras-team/keras/issues/4746
The two-output policy network with a loss for each head: the extra head is trained as a
state-value baseline by a squared error to the returns, added to the policy-gradient loss,
so every variable of the model is on the loss's path.
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


def train(observations, actions_1hot, actions_scales, returns):
    with tf.GradientTape() as tape:
        actions_probs, state_value = nn(observations)
        picked = tf.reduce_sum(actions_probs * actions_1hot, axis=1)
        loss = -tf.reduce_sum(tf.math.log(picked) * actions_scales)
        loss += 0.5 * tf.reduce_sum(tf.square(returns - state_value[:, 0]))
    grads = tape.gradient(loss, nn.trainable_weights)
    assert all(g is not None and bool(tf.reduce_all(tf.math.is_finite(g))) for g in grads)
    optimizer.apply_gradients(zip(grads, nn.trainable_weights))
    return loss


for episode in range(3):
    observations = np.random.randn(25, OBS_SIZE).astype("float32")
    actions = np.random.randint(0, N_ACTIONS, 25)
    returns = np.cumsum(np.ones(25))[::-1].astype("float32")
    scales = (returns - returns.mean()) / returns.std()
    train(observations, np.eye(N_ACTIONS, dtype="float32")[actions], scales, returns)
