"""GC109 outside-tape: forward pass or loss computed while the tape was not recording."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class OutsideTape(Rule):
    code = "GC109"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "outside-tape"
    summary = (
        "Part of the path from the variables to the loss ran before the tape started or after it stopped recording."
    )
    message = "{call} ran {when} the GradientTape recorded, so the tape cannot differentiate through it: {variables} {get} no gradient"
    what = """
Finds a path from the variables to the target that goes through ops the tape did not
record: the forward pass done before `with tf.GradientTape()` opened (e.g. while
collecting an episode), or the loss transformed after it closed
(`tape.gradient(-loss, ...)` negates outside the block). Also a tensor asked for as a
source that the target depends on only through such a forward pass (Grad-CAM's
`preds, conv_out = model(image)` above the tape, then `tape.gradient(score, conv_out)`):
watching it would not help, so it is this rule at that call, not GC110. A
`tf.stop_gradient` on a target (a TD target) inside the tape does not hide a prediction
computed before it: the finding is the forward pass, not the stop.
"""
    why = """
A `GradientTape` differentiates only what it recorded. A value computed before the tape
opened is, to the tape, a constant; a target computed after the block closed was never
recorded at all. Either way every variable on that path gets `None`.
"""
    example = """
probs, value = agent(state)          # forward pass outside the tape
with tf.GradientTape() as tape:
    loss = -tf.math.log(probs[0, a]) * advantage
grads = tape.gradient(-loss, agent.trainable_variables)  # negated outside, too
"""
    use_instead = """
with tf.GradientTape() as tape:
    probs, value = agent(state)
    loss = -tf.math.log(probs[0, a]) * advantage
    objective = -loss
grads = tape.gradient(objective, agent.trainable_variables)
"""
    fix = (
        "Move the forward pass, and every operation on the loss (such as a negation), inside the "
        "`with tf.GradientTape() as tape:` block, before calling `tape.gradient`."
    )
    fix_variants = {
        "build": (
            "When the value is computed once in a layer's `build()` or `__init__()`",
            "`{method}()` runs once, before any tape records, so every step uses its result as a "
            "constant. Compute `{call}` in `call()` from the weights (keep only the weights, and any "
            "fixed noise or mask, in `{method}()`), so each forward pass recomputes it on the tape.",
        ),
        "gradient": (
            "When a gradient computed after the tape feeds the loss (a loss on derivatives)",
            "`{call}` ran after the tape stopped recording, so the loss sees its result as a constant. "
            "For a loss on derivatives (force matching, PINN residuals, gradient penalties), nest two "
            "tapes: compute the inner `tape.gradient` inside the outer tape's `with` block, with the "
            "loss, and ask the outer tape for the variables' gradients.",
        ),
        "paused": (
            "When the forward pass runs under `tape.stop_recording()`",
            "`{call}` runs inside a `with tape.stop_recording():` block, so the tape is open but does "
            "not record it, and the loss sees its result as a constant. Keep only what must not be "
            "trained through (a teacher's or target network's output) under `stop_recording()`, and "
            "compute the trained model's forward pass, and the loss on it, out of that block, inside "
            "the tape.",
        ),
    }
    doc_fields = {"call": "self.w / tf.norm(self.w)", "method": "build"}
    references = ("https://www.tensorflow.org/guide/autodiff#controlling_what_the_tape_watches",)

    invalid = (
        Example(
            "actor-critic episode collected before the tape opens (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

agent = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(2, activation="softmax")])
log_probs = []
for t in range(5):
    probs = agent(np.random.rand(1, 4).astype("float32"))  # expect: GC109
    log_probs.append(tf.math.log(probs[0, 0]))
with tf.GradientTape() as tape:
    loss = -tf.add_n(log_probs)
grads = tape.gradient(loss, agent.trainable_variables)
""",
        ),
        Example(
            "the loss negated in the gradient call, after the tape closed (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(8, 4).astype("float32")
with tf.GradientTape() as tape:
    reward = tf.reduce_mean(model(x))
grads = tape.gradient(-reward, model.trainable_variables)  # expect: GC109
""",
        ),
        Example(
            "the forward pass before the tape inside a tf.function step",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])


@tf.function
def step(x, y):
    prediction = model(x)  # expect: GC109
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(y - prediction))
    return tape.gradient(loss, model.trainable_variables)


step(np.random.rand(8, 4).astype("float32"), np.random.rand(8, 1).astype("float32"))
""",
        ),
    )
    valid = (
        Example(
            "the episode collected inside the tape (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

agent = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(2, activation="softmax")])
with tf.GradientTape() as tape:
    log_probs = []
    for t in range(5):
        probs = agent(np.random.rand(1, 4).astype("float32"))
        log_probs.append(tf.math.log(probs[0, 0]))
    loss = -tf.add_n(log_probs)
grads = tape.gradient(loss, agent.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
        Example(
            "a target network evaluated outside the tape, only the online network trained (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

online = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
target_net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])


@tf.function
def step(states, next_states, rewards):
    target = rewards + 0.99 * tf.reduce_max(target_net(next_states), axis=1)
    with tf.GradientTape() as tape:
        q = tf.reduce_max(online(states), axis=1)
        loss = tf.reduce_mean(tf.square(target - q))
    return tape.gradient(loss, online.trainable_variables)


step(np.random.rand(8, 4).astype("float32"), np.random.rand(8, 4).astype("float32"), np.random.rand(8).astype("float32"))
""",
        ),
    )
