"""Real-world case 284.

Source: https://github.com/tensorflow/tensorflow/issues/28966
Bug: a DQN's first layer has a fixed sparse connectivity: the layer keeps the
non-zero weights as a variable and builds the tf.SparseTensor kernel from it
once, in build(), then multiplies with tf.sparse.sparse_dense_matmul in call().
The agent calls the Q-network to act before the first training step, so
build() (the read of the values variable into the SparseTensor) runs outside
any GradientTape; every later call multiplies with that stale snapshot, and
the training loop gets None for the weights inside the SparseTensor while the
biases train (as the reporter found: "the gradient for biases is computed
without any issue", the sparse weights get None; Keras warns "Gradients do not
exist for variables").
Setting: reinforcement learning (DQN), Keras 2 (tf_keras) subclassed model
with a custom sparse layer, eager custom training loop.
"""
import numpy as np
import tensorflow as tf

np.random.seed(0)
tf.random.set_seed(0)
OBS, HIDDEN, N_ACTIONS, BATCH, GAMMA = 16, 32, 4, 32, 0.99


class SparseDense(tf.keras.layers.Layer):
    def __init__(self, units, density=0.25, **kwargs):
        super().__init__(**kwargs)
        self.units, self.density = units, density

    def build(self, input_shape):
        n_in = int(input_shape[-1])
        mask = np.random.rand(self.units, n_in) < self.density
        self.indices = np.argwhere(mask).astype("int64")
        self.kernel_values = self.add_weight(name="kernel_values", shape=(len(self.indices),),
                                             initializer=tf.keras.initializers.RandomNormal(stddev=0.3))
        self.bias = self.add_weight(name="bias", shape=(self.units,), initializer="zeros")
        self.kernel = tf.SparseTensor(self.indices, self.kernel_values, dense_shape=(self.units, n_in))

    def call(self, x):
        out = tf.sparse.sparse_dense_matmul(self.kernel, x, adjoint_b=True)
        return tf.nn.relu(tf.transpose(out) + self.bias)


class QNetwork(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.sparse_in = SparseDense(HIDDEN, name="sparse_in")
        self.q_values = tf.keras.layers.Dense(N_ACTIONS, name="q_values")

    def call(self, x):
        return self.q_values(self.sparse_in(x))


q_net = QNetwork()
optimizer = tf.keras.optimizers.Adam(1e-3)


def act(state, epsilon=0.1):
    if np.random.rand() < epsilon:
        return np.random.randint(N_ACTIONS)
    return int(tf.argmax(q_net(state[None]), axis=1)[0])


# collect a batch of transitions with the current policy (random environment)
states = np.random.randn(BATCH, OBS).astype("float32")
actions = np.array([act(s) for s in states])
rewards = np.random.randn(BATCH).astype("float32")
next_states = np.random.randn(BATCH, OBS).astype("float32")
dones = np.zeros(BATCH, dtype="float32")

for step in range(3):
    targets = rewards + GAMMA * (1.0 - dones) * tf.reduce_max(q_net(next_states), axis=1)
    with tf.GradientTape() as tape:
        q = q_net(states)
        q_taken = tf.reduce_sum(q * tf.one_hot(actions, N_ACTIONS), axis=1)
        loss = tf.reduce_mean(tf.square(targets - q_taken))
    grads = tape.gradient(loss, q_net.trainable_variables)
    optimizer.apply_gradients(zip(grads, q_net.trainable_variables))
    print(step, float(loss), "no gradient:", [v.name for g, v in zip(grads, q_net.trainable_variables) if g is None])
