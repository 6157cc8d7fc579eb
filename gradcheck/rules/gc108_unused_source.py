"""GC108 unused-source: a variable or watched tensor the loss does not depend on."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class UnusedSource(Rule):
    code = "GC108"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "unused-source"
    summary = "A variable (or watched tensor) asked for gradients is not used in computing the loss at all."
    message = "{variables} never {reach} the loss: the tape has no path from {them} to the target"
    what = """
Finds sources of `tape.gradient` with no data-flow path to the target at all: a layer built
but never called, layers not chained in `call()` (each applied to the raw input), a
dropped loss term, an unused head, the wrong model's variables (variables of a model the
loss never calls), a watched tensor the model never saw, a value a traced loop's body
computes and drops (`ta.write(t, y)` without `ta =` inside a `tf.function`: TensorFlow then
gives None, or zeros when the loop's other outputs reach the loss). Also a model the request
names whose forward pass ran before the tape on purpose: a teacher whose output is only the
soft target of a distillation loss, or a GAN's generator asked of the discriminator's tape (which
trains the discriminator, left out of the request); then the finding points at the expression
that built the source list, and a note names the call that ran before the tape. Also a
request whose gradients an optimizer update applies to other variables than the ones asked
for (`d_tape.gradient(d_loss, generator.trainable_variables)` then
`apply_gradients(zip(grads, discriminator.trainable_variables))`), when the tape read those
variables for the loss or the shapes cannot match (python then crashes at the update): the
finding points at the source list, and notes name the update and the crash. The finding points at
the dead end, the line where the last value made from the variable is left, else at the
`tape.gradient` call, and notes where the variable was last read, if it was.

Not this rule: a GAN generator step that asks for (and applies) the *discriminator's*
variables. The generator loss does depend on them, so their gradients exist; what is wrong
is that the generator's variables, which the loss depends on too, are never updated: that
is GC117 (not-updated), judged over the whole training step.
"""
    why = """
A variable the loss does not depend on has no gradient; TensorFlow returns `None`. Keras 3
only warns ("Gradients do not exist for variables ...") and trains the rest, so the unused
part silently stays at its initial values.
"""
    example = """
class Regressor(keras.Model):
    def call(self, inputs):
        h = self.fc1(inputs)
        h = self.fc2(inputs)  # fc1's output is thrown away
        return self.head(h)
"""
    use_instead = """
class Regressor(keras.Model):
    def call(self, inputs):
        h = self.fc1(inputs)
        h = self.fc2(h)
        return self.head(h)
"""
    fix = (
        "Make the loss use {names}: call the layer and chain its output into the model, include the "
        "dropped loss term, or ask for the variables of the model that computed the loss "
        "(`model.trainable_variables`). If they must not train here, leave them out of the sources "
        "or allow them (`--allow-none`)."
    )
    fix_variants = {
        "dead-end": (
            "When the finding points at the line where the last value made from them is left",
            "{value} is computed from {names} here and then left unused: feed it into the rest of the "
            "computation (the next layer or the loss term) where another value is used instead, or, if it "
            "is not needed, remove it and the layers that only compute it.",
        ),
        "dropped-term": (
            "When the last value made from them is a loss term (a penalty, a distillation or auxiliary loss) "
            "that the loss expression leaves out",
            "{value} is computed from {names} but this loss leaves it out: add it to the loss "
            "(`loss = ... + weight * {value_name}`), or, if it is not meant to train them, remove it and "
            "leave {names} out of the sources.",
        ),
        "other-loss": (
            "When the tape, opened together with another, ran their model but its loss is built without its "
            "output (a GAN generator's loss from the discriminator's score of the real images)",
            "This loss is built without the output of the model that owns {names}, though that model ran on "
            "this tape (its output went into the other tape's loss): build this loss from that output (a "
            "generator's loss from `discriminator(generated)`, not from the real images' scores).",
        ),
        "compile": (
            "When `compile` leaves an output of the model without a loss (`model.fit`)",
            "Give every output a loss and a loss weight, one entry per output in "
            "`compile(loss=[...], loss_weights=[...])` or a dict naming each output ({outputs} has "
            "none), or leave that head out of the trained model (or set its layers `trainable=False`) "
            "if it is not meant to train.",
        ),
        "call": (
            "When the weights are created in a layer's `call()` (`add_weight` there)",
            "`call()` makes new weights each time it runs, so the loss uses the newest ones, never "
            "{names}, the ones asked for (and that the optimizer updates). Create the weights once, in "
            "`build()` (or `__init__`), keep them on `self`, and only use them in `call()`.",
        ),
        "stopped-target": (
            "When the variables reach the loss only through a `tf.stop_gradient` on a target (an advantage, "
            "a TD target, a teacher's output)",
            "The stop is right: a target is a constant to its loss. The sources are not: ask this loss for the "
            "variables of the model that makes its prediction (the actor's for the actor's loss), and train "
            "{names} with a loss of their own (the critic's value loss).",
        ),
        "empty-target": (
            "When the target handed to `tape.gradient` is empty (`model.losses` of a model whose layers add no loss)",
            "There is no loss to differentiate: {target} is empty. `model.losses` holds only the losses layers "
            "add (regularization, `add_loss`); differentiate the training loss instead "
            "(`loss = self.compute_loss(x, y, y_pred)`, then `tape.gradient(loss, ...)`), adding "
            "`sum(model.losses)` to it when there are any.",
        ),
        "outside-target": (
            "When their model ran before the tape and its output is only a target of this loss (a teacher's "
            "soft targets)",
            "Their model ran before the tape on purpose: its output is a target, a constant to this loss, so "
            "{names} get no gradient from it. Leave them out of the sources (ask for the variables of the model "
            "being trained, `self.student.trainable_variables`), or freeze their model "
            "(`teacher.trainable = False`) so that `self.trainable_variables` leaves them out.",
        ),
        "other-model": (
            "When their model ran before the tape, and the tape trains another model that the request leaves out",
            "The tape recorded another model's forward pass, and this request asks for {names}, whose model ran "
            "before the tape: ask this loss for the variables of the model it trains (the discriminator's for "
            "the discriminator's loss). If {names} are meant to train with this loss, call their model inside "
            "the tape instead.",
        ),
        "applied-elsewhere": (
            "When the gradients are applied to other variables than the ones the request asked for "
            "(`zip(grads, discriminator.trainable_variables)` after asking for the generator's)",
            "Ask this loss for the variables the update trains ({applied}): the request and the "
            "`apply_gradients` that follows must name the same list. Computing one list once "
            "(`variables = self.discriminator.trainable_variables`) and passing it to both keeps them together.",
        ),
        "loop": (
            "When a value made in a traced loop's body is dropped there (autograph's `for t in tf.range(n)`)",
            "Carry the value out of the loop: in a `tf.function`, `TensorArray.write` returns a new array "
            "and leaves the old one as it was, so keep the array it returned (`ta = ta.write(t, y)`); "
            "any other value the body computes reaches the loss only as a loop variable (assigned to a "
            "name the loop carries on).",
        ),
        "tensor": (
            "When the source is a watched tensor (not a variable) that the model never consumed (a slice of the "
            "inputs taken beside the model, an interpolate built apart from the one the critic scores)",
            "{names} is a tensor the model never consumed: the loss is computed from another tensor, so no path "
            "leads back to {names}. Feed that very tensor to the model inside the tape (`model({names})`, "
            "`critic({names})`), or take the gradient with respect to the tensor the model consumed and slice "
            "or gather the part you need from the result (`tape.gradient(y, inputs)[:, 0:1]`). To differentiate "
            "by one column, split the input into columns first, watch them, and concatenate them into the "
            "model's input.",
        ),
        "relative": (
            "When the loss uses a copy of the watched tensor (the same value computed again, or "
            "converted), not the tensor itself",
            "Compute the loss from {names} itself: call the rest of the model on the watched tensor, "
            "or, for a layer's output (Grad-CAM), build one model with both outputs, "
            "`grad_model = keras.Model(model.inputs, [layer.output, model.output])`, and take the "
            "gradient with respect to the layer output it returns, inside the same tape.",
        ),
    }
    #: the message of the ``applied-elsewhere`` variant: the sources do reach the loss
    applied_message = (
        "{variables} {is} asked for here, but the update applies {its} {gradient} to {applied}: "
        "the request names another model's variables"
    )

    def format_message(self, **fields) -> str:
        if fields.get("variant") == "applied-elsewhere":
            return self.render(self.applied_message, **fields)
        return super().format_message(**fields)

    doc_fields = {
        "arg": "x",
        "names": "x",
        "call": "the call",
        "outputs": "output_b",
        "value": "`h`",
        "target": "`model.losses`",
        "applied": "`discriminator`'s variables",
    }
    references = ("https://www.tensorflow.org/guide/autodiff#getting_a_gradient_of_none",)

    invalid = (
        Example(
            "a layer built in __init__ but never called (model.fit)",
            "fit",
            """\
import keras
import numpy as np


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(8, activation="relu", name="hidden")
        self.extra = keras.layers.Dense(8, name="extra")
        self.out = keras.layers.Dense(1, name="out")

    def build(self, input_shape):
        self.hidden.build(input_shape)
        self.extra.build((None, 8))
        self.out.build((None, 8))

    def call(self, x):
        return self.out(self.hidden(x))


model = Net()
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(32, 4).astype("float32"), np.random.rand(32, 1).astype("float32"), epochs=2, verbose=0)  # expect: GC108
""",
        ),
        Example(
            "the critic's variables asked of the actor's loss (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

actor = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
states = np.random.rand(16, 4).astype("float32")
advantages = np.random.rand(16).astype("float32")
with tf.GradientTape() as tape:
    loss = -tf.reduce_mean(tf.math.log(actor(states)[:, 0]) * advantages)
grads = tape.gradient(loss, critic.trainable_variables)  # expect: GC108
""",
        ),
        Example(
            "the critic's variables asked of the actor's loss, whose advantage is stopped",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

actor = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
states = np.random.rand(16, 4).astype("float32")
actions = np.random.randint(0, 2, 16)
returns = np.random.rand(16, 1).astype("float32")


@tf.function
def step():
    with tf.GradientTape() as actor_tape, tf.GradientTape() as critic_tape:
        probs = actor(states)
        values = critic(states)
        advantage = tf.stop_gradient(returns - values)
        taken = tf.reduce_sum(probs * tf.one_hot(actions, 2), axis=1, keepdims=True)
        actor_loss = -tf.reduce_mean(tf.math.log(taken + 1e-8) * advantage)
        critic_loss = tf.reduce_mean(tf.square(returns - values))
    actor_grads = actor_tape.gradient(actor_loss, critic.trainable_variables)  # expect: GC108
    critic_grads = critic_tape.gradient(critic_loss, critic.trainable_variables)
    return actor_grads, critic_grads


step()
""",
        ),
        Example(
            "a layer's second output dropped by indexing: the finding is where it is left",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf


class Encoder(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.proj = keras.layers.Dense(8)
        self.pool = keras.layers.Dense(8)

    def call(self, x):
        seq = self.proj(x)
        pooled = self.pool(tf.reduce_mean(seq, axis=1))
        return seq, pooled


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = keras.layers.Dense(2)

    def call(self, x):
        h = self.encoder(x)[0]  # expect: GC108
        return self.head(tf.reduce_mean(h, axis=1))


model = Net()
optimizer = keras.optimizers.Adam()


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


step(np.random.rand(4, 5, 3).astype("float32"), np.random.rand(4, 2).astype("float32"))
""",
        ),
    )
    valid = (
        Example(
            "a frozen layer is not asked for gradients (model.fit)",
            "fit",
            """\
import keras
import numpy as np

frozen = keras.layers.Dense(8, name="frozen")
frozen.trainable = False
model = keras.Sequential([keras.Input((4,)), frozen, keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(32, 4).astype("float32"), np.random.rand(32, 1).astype("float32"), epochs=2, verbose=0)
""",
        ),
        Example(
            "actor and critic each asked for their own loss (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

actor = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
states = np.random.rand(16, 4).astype("float32")
returns = np.random.rand(16, 1).astype("float32")
with tf.GradientTape(persistent=True) as tape:
    values = critic(states)
    advantages = tf.stop_gradient(returns - values)
    actor_loss = -tf.reduce_mean(tf.math.log(actor(states)[:, :1]) * advantages)
    critic_loss = tf.reduce_mean(tf.square(returns - values))
actor_grads = tape.gradient(actor_loss, actor.trainable_variables)
critic_grads = tape.gradient(critic_loss, critic.trainable_variables)
assert all(g is not None for g in actor_grads + critic_grads)
""",
        ),
        Example(
            "both outputs of a layer used",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf


class Encoder(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.proj = keras.layers.Dense(8)
        self.pool = keras.layers.Dense(8)

    def call(self, x):
        seq = self.proj(x)
        pooled = self.pool(tf.reduce_mean(seq, axis=1))
        return seq, pooled


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = keras.layers.Dense(2)

    def call(self, x):
        h, pooled = self.encoder(x)
        return self.head(tf.reduce_mean(h, axis=1) + pooled)


model = Net()
optimizer = keras.optimizers.Adam()


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


step(np.random.rand(4, 5, 3).astype("float32"), np.random.rand(4, 2).astype("float32"))
""",
        ),
    )
