"""Real-world case 491.

Source: https://github.com/hereismari/tensorflow-maml/issues/3
Bug: TF2 MAML with several inner SGD steps. After the first step the fast weights are plain
tensors, so the next inner tape returns None for them ("updating the weights manually ... makes
them non-trainable"). The user "makes them trainable again" by wrapping each updated fast weight in
a new tf.Variable. Creating a variable writes the value into it (an assignment), which the tape
cannot differentiate: the query loss reads only the new variables, so the outer tape returns None
for every meta-parameter (not zeros) and the meta-update cannot be applied.
Setting: raw tf.Variables, functional forward, eager outer tape with nested inner tapes.
"""
import numpy as np
import tensorflow as tf

np.random.seed(0)
tf.random.set_seed(0)
INNER_LR, INNER_STEPS, TASKS = 0.01, 2, 3

meta = [tf.Variable(tf.random.normal((1, 40), stddev=0.5), name="w1"), tf.Variable(tf.zeros(40), name="b1"),
        tf.Variable(tf.random.normal((40, 1), stddev=0.2), name="w2"), tf.Variable(tf.zeros(1), name="b2")]


def forward(params, x):
    w1, b1, w2, b2 = params
    return tf.nn.relu(x @ w1 + b1) @ w2 + b2


def sine_task():
    amp, phase = np.random.uniform(0.1, 5.0), np.random.uniform(0, np.pi)
    x = np.random.uniform(-5, 5, (20, 1)).astype("float32")
    y = (amp * np.sin(x + phase)).astype("float32")
    return x[:10], y[:10], x[10:], y[10:]


with tf.GradientTape() as outer_tape:
    query_loss = 0.0
    for _ in range(TASKS):
        x_s, y_s, x_q, y_q = sine_task()
        fast = meta
        for _ in range(INNER_STEPS):
            with tf.GradientTape() as inner_tape:
                support_loss = tf.reduce_mean(tf.square(forward(fast, x_s) - y_s))
            grads = inner_tape.gradient(support_loss, fast)
            fast = [tf.Variable(p - INNER_LR * g) for p, g in zip(fast, grads)]
        query_loss += tf.reduce_mean(tf.square(forward(fast, x_q) - y_q))
meta_grads = outer_tape.gradient(query_loss, meta)

for v, g in zip(meta, meta_grads):
    print(v.name, "None" if g is None else f"max|g|={float(tf.reduce_max(tf.abs(g))):.3g}")
print("meta-update skipped: no meta-parameter has a gradient" if all(g is None for g in meta_grads) else "ok")
