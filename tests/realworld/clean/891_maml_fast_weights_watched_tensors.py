"""Clean control 891 (look-alike of case 491).

Source: https://github.com/hereismari/tensorflow-maml/issues/3
The workaround the thread settles on ("a solution based on 'watch'-ing some variables in the
gradient tape"): the fast weights stay tensors, fast = p - INNER_LR * g, and each inner tape
watches them, so several inner SGD steps work and the outer tape differentiates the query loss
through every inner step (second-order MAML). Every meta-parameter gets a nonzero gradient.
Setting: raw tf.Variables, functional forward, eager outer tape with nested inner tapes.
"""
import keras
import numpy as np
import tensorflow as tf

np.random.seed(0)
tf.random.set_seed(0)
INNER_LR, INNER_STEPS, TASKS = 0.01, 2, 3

meta = [tf.Variable(tf.random.normal((1, 40), stddev=0.5), name="w1"), tf.Variable(tf.zeros(40), name="b1"),
        tf.Variable(tf.random.normal((40, 1), stddev=0.2), name="w2"), tf.Variable(tf.zeros(1), name="b2")]
meta_optimizer = keras.optimizers.Adam(1e-3)


def forward(params, x):
    w1, b1, w2, b2 = params
    return tf.nn.relu(x @ w1 + b1) @ w2 + b2


def sine_task():
    amp, phase = np.random.uniform(0.1, 5.0), np.random.uniform(0, np.pi)
    x = np.random.uniform(-5, 5, (20, 1)).astype("float32")
    y = (amp * np.sin(x + phase)).astype("float32")
    return x[:10], y[:10], x[10:], y[10:]


for it in range(2):
    with tf.GradientTape() as outer_tape:
        query_loss = 0.0
        for _ in range(TASKS):
            x_s, y_s, x_q, y_q = sine_task()
            fast = meta
            for _ in range(INNER_STEPS):
                with tf.GradientTape() as inner_tape:
                    inner_tape.watch(fast)
                    support_loss = tf.reduce_mean(tf.square(forward(fast, x_s) - y_s))
                grads = inner_tape.gradient(support_loss, fast)
                fast = [p - INNER_LR * g for p, g in zip(fast, grads)]
            query_loss += tf.reduce_mean(tf.square(forward(fast, x_q) - y_q))
    meta_grads = outer_tape.gradient(query_loss, meta)
    assert all(g is not None and np.any(g.numpy()) for g in meta_grads), "zero or missing meta-gradient"
    meta_optimizer.apply_gradients(zip(meta_grads, meta))
    print(f"iteration {it}: query loss {float(query_loss):.4f}")
