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
        "A target (TD/Q target, advantage weighting a log-probability, distillation target) is built from the "
        "trained network inside the tape without `tf.stop_gradient`."
    )
    message = (
        "{call} is {what}, built from the trained network inside the tape, and the gradient flows through it: "
        "{variables} {get} {effect}"
    )
    what = """
A *target* is defined by its role: what the prediction is compared against. It is the
`y_true` of a Keras loss, the side of a squared, absolute or Huber error that is not the
prediction, or the weight (the advantage) that multiplies a log-probability or a probability
ratio. Only a target that depends on the trained variables (the sources of this
`tape.gradient`) through a path without `tf.stop_gradient` is reported, at the line that
builds the target:

- an advantage `R - V(s)` (or a TD error `r + γ·V(s') - V(s)`) that multiplies `log π(a|s)`
  (or PPO's ratio) without `tf.stop_gradient`: with a shared trunk or separate heads, or a
  separate critic trained by the same tape, in eager mode, under `tf.function` and in a
  `train_step` run by `fit`, also when the probabilities and the values are read back from
  `TensorArray`s written in an episode loop (`tf.while_loop`, or autograph's
  `for t in tf.range(n)`: TensorFlow's actor-critic tutorial, keras-io#194): which head each
  of the loop's outputs used is read in the loop's body;
- a temporal-difference target (`r + γ · max Q(s')`, `r + γ · V(s')`) in a squared / Huber
  error, computed with the online network inside the tape, from a separate call on the next
  states or from the same forward pass over a trajectory (`r + γ · values[1:]`);
- the same TD target computed by a target network (a copy of the online one: the same
  variable shapes) whose variables are trained with the online network's (a Double DQN that
  differentiates the agent model's `self.trainable_variables`): the step moves the target
  towards the prediction;
- a self-distillation target (BYOL/SimSiam's target projection, pseudo-labels of the same
  network as a cross-entropy's labels) that is not stopped, and a mean teacher whose EMA
  weights are computed from the student's inside the tape (`0.9 * t + 0.1 * s`, then a
  functional call with them): reported where the teacher's prediction is made;
- a consistency or pseudo-label target: both sides are functions of the same network (the
  same forward output, or its prediction on the clean example beside the augmented one) and
  one side is that prediction sharpened (`softmax(logits / T)` with `T < 1`, MixMatch's
  `p ** (1 / T)` normalised): the sharpened side is the target, reported where it is made;
  so is the clean prediction beside a perturbed one (the Pi-model, VAT: two calls on the same
  batch, only the other drawing input noise or dropout).

Not reported, because nothing there is a target: a physics-informed residual built from the
network's own derivatives (`u_t + u·u_x - ν·u_xx`, nested tapes), a VAE's KL term
(`1 + log σ² - μ² - σ²` is a sum of terms, no error), a normalizing flow's negative
log-likelihood (`½ z² - log|det J|`), an entropy bonus or focal factor (`p · log p`: the
weight is the policy itself), a prediction assembled from several trained layers
(`head(x + block(x)) - baseline(x)` compared with data), Siamese/triplet distances and
reconstruction losses, and two views compared through the same squash (no side is sharper
than the other). Correct code stays silent too: an advantage or target wrapped in
`tf.stop_gradient`, computed before the tape opens, or by a target network that is not
trained; a critic loss on the unstopped error (`(R - V(s))²` trains the critic, as it should)
and a second tape that only asks for the actor's variables.
"""
    why = """
Semi-gradient TD, policy-gradient and self-distillation methods treat the target as a
constant. An advantage that is not stopped adds `∇V · log π` to the critic's (and the shared
trunk's) update: the policy loss pushes the value estimate around, and the policy tends to
collapse onto one action (keras-io#194, async-rl#8). Letting the
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
        "advantage": (
            "An advantage that weights a log-probability",
            "Stop the gradient on the weight of the policy term: `advantage = tf.stop_gradient(returns - values)` "
            "(or `returns - tf.stop_gradient(values)`) in `-log_prob * advantage`; keep the unstopped error only "
            "in the critic's own loss, `tf.square(returns - values)`.",
        ),
        "td": (
            "A temporal-difference target",
            "Make the TD target a constant: `target = tf.stop_gradient(rewards + gamma * (1 - dones) * "
            "next_q)`, or compute `next_q` with a target network (`target_model(next_states)`) or before the tape "
            "opens. Only the prediction `Q(s, a)` should carry the gradient.",
        ),
        "target-network": (
            "A target network trained with the online network",
            "Differentiate and update only the online network: `tape.gradient(loss, "
            "online_network.trainable_variables)` (not a list that holds the target network's variables too, "
            "such as the agent model's `self.trainable_variables`), and make the target a constant, `tf.stop_gradient(rewards + gamma * next_q)`; the target "
            "network moves only by copying (or Polyak averaging) the online weights.",
        ),
        "distill": (
            "A self-distillation target",
            "Stop the gradient on the target side: `tf.stop_gradient(target_projection)` (BYOL/SimSiam), or "
            "compute the teacher's outputs with a separate (EMA) teacher network, or before the tape opens.",
        ),
        "consistency": (
            "A consistency or pseudo-label target (a sharpened copy of the prediction)",
            "Stop the gradient on the sharpened side: `target = tf.stop_gradient(tf.nn.softmax(logits / T))` "
            "(UDA, FixMatch, MixMatch treat the pseudo-label as a constant); only the prediction it is compared "
            "with should carry the gradient.",
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
        Example(
            "A2C advantage R - V(s) not stopped in the policy loss (shared trunk, eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

inputs = keras.Input((4,))
trunk = keras.layers.Dense(16, activation="relu")(inputs)
model = keras.Model(inputs, [keras.layers.Dense(2)(trunk), keras.layers.Dense(1)(trunk)])
states = np.random.rand(16, 4).astype("float32")
actions = np.random.randint(0, 2, size=16)
returns = np.random.rand(16).astype("float32")
with tf.GradientTape() as tape:
    logits, values = model(states)
    log_probs = tf.gather(tf.nn.log_softmax(logits), actions, batch_dims=1)
    advantages = returns - values[:, 0]  # expect: GC203
    loss = -tf.reduce_mean(log_probs * advantages) + tf.reduce_mean(tf.square(advantages))
grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
        Example(
            "A3C advantage inline in a sparse cross-entropy policy loss (tf.function, separate heads)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

body, pi, v = keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(3), keras.layers.Dense(1)


@tf.function
def step(states, actions, returns):
    with tf.GradientTape() as tape:
        h = body(states)
        values = v(h)[:, 0]
        nll = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=pi(h))
        loss = tf.reduce_mean(nll * (returns - values)) + tf.reduce_mean(tf.square(returns - values))  # expect: GC203
    variables = body.trainable_variables + pi.trainable_variables + v.trainable_variables
    return tape.gradient(loss, variables)


step(np.random.rand(8, 5).astype("float32"), np.random.randint(0, 3, size=8), np.random.rand(8).astype("float32"))
""",
        ),
        Example(
            "TD(0) target from the same forward pass over a trajectory (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

critic = keras.Sequential([keras.Input((3,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
states = np.random.rand(21, 3).astype("float32")
rewards = np.random.rand(20).astype("float32")
with tf.GradientTape() as tape:
    values = tf.squeeze(critic(states), axis=1)
    td_target = rewards + 0.99 * values[1:]  # expect: GC203
    loss = tf.reduce_mean(tf.square(td_target - values[:-1]))
grads = tape.gradient(loss, critic.trainable_variables)
""",
        ),
    )
    valid = (
        Example(
            "A2C with the advantage stopped, an entropy bonus, and the critic trained on the error (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

inputs = keras.Input((4,))
trunk = keras.layers.Dense(16, activation="relu")(inputs)
model = keras.Model(inputs, [keras.layers.Dense(2)(trunk), keras.layers.Dense(1)(trunk)])
states = np.random.rand(16, 4).astype("float32")
actions = np.random.randint(0, 2, size=16)
returns = np.random.rand(16).astype("float32")
with tf.GradientTape() as tape:
    logits, values = model(states)
    log_pi = tf.nn.log_softmax(logits)
    log_probs = tf.gather(log_pi, actions, batch_dims=1)
    entropy = -tf.reduce_sum(tf.nn.softmax(logits) * log_pi, axis=1)
    advantages = returns - values[:, 0]
    loss = (
        -tf.reduce_mean(log_probs * tf.stop_gradient(advantages))
        + tf.reduce_mean(tf.square(advantages))
        - 0.01 * tf.reduce_mean(entropy)
    )
grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
        Example(
            "a physics-informed residual from the network's own derivatives (nested tapes, tf.function)",
            "tf.function",
            """\
import keras
import tensorflow as tf

net = keras.Sequential([keras.Input((2,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(1)])


@tf.function
def step(t, x):
    with tf.GradientTape() as tape:
        with tf.GradientTape(persistent=True) as inner:
            inner.watch([t, x])
            u = net(tf.concat([t, x], axis=1))
            u_x = inner.gradient(u, x)
        u_t = inner.gradient(u, t)
        u_xx = inner.gradient(u_x, x)
        loss = tf.reduce_mean(tf.square(u_t + u * u_x - 0.01 * u_xx))
    return tape.gradient(loss, net.trainable_variables)


step(tf.random.uniform((32, 1)), tf.random.uniform((32, 1)))
""",
        ),
        Example(
            "a VAE's ELBO: reconstruction error plus the analytic KL term (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

enc_in = keras.Input((8,))
h = keras.layers.Dense(16, activation="relu")(enc_in)
encoder = keras.Model(enc_in, [keras.layers.Dense(2)(h), keras.layers.Dense(2)(h)])
decoder = keras.Sequential([keras.Input((2,)), keras.layers.Dense(8)])
x = np.random.rand(32, 8).astype("float32")
with tf.GradientTape() as tape:
    mu, log_var = encoder(x)
    z = mu + tf.exp(0.5 * log_var) * tf.random.normal(tf.shape(mu))
    recon = tf.reduce_mean(tf.reduce_sum(tf.square(x - decoder(z)), axis=1))
    kl = -0.5 * tf.reduce_mean(tf.reduce_sum(1.0 + log_var - tf.square(mu) - tf.exp(log_var), axis=1))
    loss = recon + kl
grads = tape.gradient(loss, encoder.trainable_variables + decoder.trainable_variables)
""",
        ),
        Example(
            "an affine coupling flow's negative log-likelihood (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

conditioner = keras.Sequential([keras.Input((2,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(4)])


@tf.function
def step(x):
    x1, x2 = x[:, :2], x[:, 2:]
    with tf.GradientTape() as tape:
        st = conditioner(x1)
        log_scale, shift = tf.tanh(st[:, :2]), st[:, 2:]
        z = tf.concat([x1, x2 * tf.exp(log_scale) + shift], axis=1)
        log_pz = -0.5 * tf.reduce_sum(tf.square(z), axis=1) - 2.0 * np.log(2 * np.pi)
        nll = -tf.reduce_mean(log_pz + tf.reduce_sum(log_scale, axis=1))
    return tape.gradient(nll, conditioner.trainable_variables)


step(np.random.randn(64, 4).astype("float32"))
""",
        ),
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
