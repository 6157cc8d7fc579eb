"""GC109 outside-tape: forward pass or loss computed while the tape was not recording."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class OutsideTape(Rule):
    code = "GC109"
    name = "outside-tape"
    summary = (
        "Part of the path from the variables to the loss ran before the tape started or after it stopped recording."
    )
    message = "{call} ran {when} the GradientTape recorded, so the tape cannot differentiate through it: {variables} get no gradient"
    what = """
Finds a path from the variables to the target that goes through ops the tape did not
record: the forward pass done before `with tf.GradientTape()` opened (e.g. while
collecting an episode), or the loss transformed after it closed
(`tape.gradient(-loss, ...)` negates outside the block).
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
    references = ("https://www.tensorflow.org/guide/autodiff#controlling_what_the_tape_watches",)
