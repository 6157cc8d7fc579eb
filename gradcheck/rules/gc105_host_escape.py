"""GC105 host-escape: a tensor left TensorFlow inside the tape and came back as a constant."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class HostEscape(Rule):
    code = "GC105"
    name = "host-escape"
    summary = "Inside the tape a tensor left TensorFlow (`.numpy()`, NumPy, `float()`, `model.predict`) and came back as a constant."
    message = (
        "{call} takes the value out of TensorFlow; what comes back is a constant with no gradient: {variables} get none"
    )
    what = """
Finds a tensor computed from the trained variables that is converted to a host value
inside the tape (`t.numpy()`, `np.mean(t)`, `float(t)`, `model.predict(x)`), whose result
then feeds the loss. In graph mode (`tf.function`, `model.fit`) the same code fails while
tracing (`'SymbolicTensor' object has no attribute 'numpy'`); gradcheck reports that
trace-time error as this cause.
"""
    why = """
The tape records TensorFlow ops only. A NumPy array is a plain value: when it comes back
into TensorFlow it is a new constant with no history, so the loss no longer depends on the
variables as far as the tape knows and every one of them gets `None`.
"""
    example = """
with tf.GradientTape() as tape:
    generated = generator(noise)
    stats = np.array([generated.numpy().mean(), generated.numpy().std()])
    loss = bce(tf.ones_like(critic(stats[None])), critic(stats[None]))
"""
    use_instead = """
with tf.GradientTape() as tape:
    generated = generator(noise)
    stats = tf.stack([tf.reduce_mean(generated), tf.math.reduce_std(generated)])
    loss = bce(tf.ones_like(critic(stats[None])), critic(stats[None]))
"""
    fix = (
        "Keep the computation in TensorFlow ops inside the tape: `tf.reduce_mean`, `tf.math.reduce_std`, "
        "`keras.ops.*` instead of NumPy; no `.numpy()` or `float()` on tensors that feed the loss; call "
        "the model directly (`model(x, training=True)`) instead of `model.predict`."
    )
    references = (
        "https://www.tensorflow.org/guide/autodiff#getting_a_gradient_of_none",
        "https://www.tensorflow.org/guide/function#python_side_effects",
    )
