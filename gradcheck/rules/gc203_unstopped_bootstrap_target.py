"""GC203 unstopped-bootstrap-target: a TD / distillation target computed from the trained
network inside the tape, with the gradient flowing through it."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class UnstoppedBootstrapTarget(Rule):
    code = "GC203"
    trace_check = "gradcheck.trace.values.bootstrap:check"
    name = "unstopped-bootstrap-target"
    severity = "warning"
    summary = (
        "A TD/Q or distillation target is built from the trained network inside the tape without `tf.stop_gradient`."
    )
    message = (
        "{call} is {what}, built from the trained network inside the tape, and the gradient flows through it: "
        "{variables} {get} {effect}"
    )
    what = """
Finds a regression (or distillation) loss whose two sides both reach the same trained
variables through the tape, with the gradient flowing through both:

- a temporal-difference target (`r + γ · max Q(s')`, `r + γ · V(s')`) computed with the
  online network inside `tf.GradientTape`, without `tf.stop_gradient` and without a target
  network: the target side is the one that adds the reward to the network's output;
- a self-distillation target (BYOL/SimSiam's target projection, a teacher that is the
  student itself, pseudo-label probabilities from the same network) that is not stopped:
  the two sides come from separate calls of the network, and the target side uses a
  subset of the prediction side's variables (or is the cross-entropy's labels).

It points at the line that builds the target. Correct code stays silent: a target built
before the tape opens, wrapped in `tf.stop_gradient`, or computed by a target network that
is not trained; Siamese/triplet distances, entropy bonuses and reconstruction losses.
"""
    why = """
Semi-gradient TD and self-distillation methods treat the target as a constant. Letting the
gradient through it turns Q-learning into residual-gradient minimisation: the update also
moves the target towards the prediction, learning slows down or diverges, and the Q-values
of unvisited actions drift. In BYOL/SimSiam, a target that is not stopped collapses every
representation to a constant, since making both sides equal is the cheapest minimum.
Nothing fails: the loss even goes down.
"""
    example = """
with tf.GradientTape() as tape:
    q = tf.gather(model(states), actions, batch_dims=1)
    target = rewards + gamma * (1.0 - dones) * tf.reduce_max(model(next_states), axis=1)
    loss = tf.reduce_mean(tf.square(target - q))
"""
    use_instead = """
next_q = target_model(next_states)  # a target network (or the online one, before the tape)
target = rewards + gamma * (1.0 - dones) * tf.reduce_max(next_q, axis=1)
with tf.GradientTape() as tape:
    q = tf.gather(model(states), actions, batch_dims=1)
    loss = tf.reduce_mean(tf.square(tf.stop_gradient(target) - q))
"""
    fix = (
        "Treat the target as a constant: wrap it in `tf.stop_gradient(...)`, compute it before the "
        "`tf.GradientTape` opens, or compute it with a separate target network that is not trained "
        "(updated by copying or Polyak averaging the online weights)."
    )
    fix_variants = {
        "td": (
            "A temporal-difference target",
            "Make the TD target a constant: `target = tf.stop_gradient(rewards + gamma * (1 - dones) * "
            "next_q)`, or compute `next_q` with a target network (`target_model(next_states)`) or before the tape "
            "opens. Only the prediction `Q(s, a)` should carry the gradient.",
        ),
        "distill": (
            "A self-distillation target",
            "Stop the gradient on the target side: `tf.stop_gradient(target_projection)` (BYOL/SimSiam), or "
            "compute the teacher's outputs with a separate (EMA) teacher network, or before the tape opens.",
        ),
    }
    references = (
        "https://www.tensorflow.org/api_docs/python/tf/stop_gradient",
        "https://keras.io/examples/rl/deep_q_network_breakout/",
        "https://arxiv.org/abs/2011.10566",
    )

    invalid = (
        Example(
            "DQN target from the online network inside the tape (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

q_net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)])
optimizer = keras.optimizers.Adam(1e-3)
states = np.random.rand(32, 4).astype("float32")
next_states = np.random.rand(32, 4).astype("float32")
actions = np.random.randint(0, 2, size=32)
rewards = np.random.rand(32).astype("float32")
dones = np.zeros(32, dtype="float32")
with tf.GradientTape() as tape:
    q_taken = tf.gather(q_net(states), actions, batch_dims=1)
    target = rewards + 0.99 * (1.0 - dones) * tf.reduce_max(q_net(next_states), axis=1)  # expect: GC203
    loss = tf.reduce_mean(tf.square(target - q_taken))
grads = tape.gradient(loss, q_net.trainable_variables)
optimizer.apply_gradients(zip(grads, q_net.trainable_variables))
""",
        ),
        Example(
            "critic TD target r + gamma * V(s') inside train_step (model.fit)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


class Critic(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(16, activation="tanh")
        self.value = keras.layers.Dense(1)

    def call(self, x):
        return self.value(self.hidden(x))[:, 0]

    def train_step(self, data):
        (states, next_states, rewards), _ = data
        with tf.GradientTape() as tape:
            td_target = rewards + 0.9 * self(next_states)  # expect: GC203
            loss = tf.reduce_mean(tf.square(td_target - self(states)))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


critic = Critic()
critic.compile(optimizer="adam")
s = np.random.rand(64, 3).astype("float32")
s2 = np.random.rand(64, 3).astype("float32")
r = np.random.rand(64).astype("float32")
critic.fit((s, s2, r), np.zeros(64, "float32"), epochs=1, batch_size=32, verbose=0)
""",
        ),
    )
    valid = (
        Example(
            "DQN target wrapped in tf.stop_gradient (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

q_net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)])
states = np.random.rand(32, 4).astype("float32")
next_states = np.random.rand(32, 4).astype("float32")
actions = np.random.randint(0, 2, size=32)
rewards = np.random.rand(32).astype("float32")
with tf.GradientTape() as tape:
    q_taken = tf.gather(q_net(states), actions, batch_dims=1)
    target = tf.stop_gradient(rewards + 0.99 * tf.reduce_max(q_net(next_states), axis=1))
    loss = tf.reduce_mean(tf.square(target - q_taken))
grads = tape.gradient(loss, q_net.trainable_variables)
""",
        ),
        Example(
            "Double DQN with a target network, target built before the tape (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf


def q_network():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)])


online, target_net = q_network(), q_network()
target_net.set_weights(online.get_weights())
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(states, actions, rewards, next_states, dones):
    best = tf.argmax(online(next_states), axis=1)
    next_q = tf.gather(target_net(next_states), best, batch_dims=1)
    target = rewards + 0.99 * (1.0 - dones) * next_q
    with tf.GradientTape() as tape:
        q_taken = tf.gather(online(states), actions, batch_dims=1)
        loss = tf.reduce_mean(keras.losses.huber(target[:, None], q_taken[:, None]))
    grads = tape.gradient(loss, online.trainable_variables)
    optimizer.apply_gradients(zip(grads, online.trainable_variables))
    return loss


n = 32
train_step(
    np.random.rand(n, 4).astype("float32"),
    np.random.randint(0, 2, size=n),
    np.random.rand(n).astype("float32"),
    np.random.rand(n, 4).astype("float32"),
    np.zeros(n, "float32"),
)
""",
        ),
        Example(
            "a triplet loss: the same network on both sides, and no reward (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

embed = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
a, p, n = (np.random.rand(16, 8).astype("float32") for _ in range(3))
with tf.GradientTape() as tape:
    ea, ep, en = embed(a), embed(p), embed(n)
    d_ap = tf.reduce_sum(tf.square(ea - ep), axis=1)
    d_an = tf.reduce_sum(tf.square(ea - en), axis=1)
    loss = tf.reduce_mean(tf.maximum(d_ap - d_an + 0.2, 0.0))
grads = tape.gradient(loss, embed.trainable_variables)
""",
        ),
    )
