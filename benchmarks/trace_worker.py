"""One trace-overhead measurement in a fresh process (``bench_trace.py`` runs this).

    python benchmarks/trace_worker.py MODEL MODE [--smoke] [--steps K]

MODEL is ``dqn_broken``, ``dqn_fixed``, ``resnet50``, ``transformer`` (a Keras
``train_step`` compiled with ``tf.function``, as ``fit`` and ``gradcheck.check_model`` run
it) or ``eager_mlp``, ``eager_transformer`` (a custom eager loop: ``GradientTape``,
``tape.gradient``, ``apply_gradients``). MODE is ``plain`` or ``checked`` (the same code
under ``gradcheck.trace.capture.session.Session(steps=None, skip_updates=False)``: every hook
installed, every gradient diagnosed, the optimizer update still applied, so both modes
do the same work).

Wall and CPU time (``time.process_time``: every thread of the process) are both taken.
Not timed: importing TensorFlow, a warm-up ``tf.function`` with a tape (one-time runtime
start-up, the same in both modes), building the model and its optimizer (as ``fit`` does
before its first step). Timed: the first call of the train step (trace + one execution),
and for the eager loop also the median of the next ``--steps`` steps. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Model sizes (CPU): a first call takes seconds, not minutes.
SIZES = {
    "full": {
        "dqn_batch": 32,
        "resnet_image": 64,
        "resnet_batch": 2,
        "tf_layers": 12,
        "tf_seq": 32,
        "tf_d": 128,
        "tf_heads": 4,
        "tf_ff": 512,
        "tf_batch": 8,
        "eager_tf_layers": 4,
        "mlp_units": (256, 256, 256),
        "mlp_batch": 64,
    },
    "smoke": {
        "dqn_batch": 8,
        "resnet_image": 32,
        "resnet_batch": 1,
        "tf_layers": 1,
        "tf_seq": 8,
        "tf_d": 16,
        "tf_heads": 2,
        "tf_ff": 32,
        "tf_batch": 2,
        "eager_tf_layers": 1,
        "mlp_units": (16,),
        "mlp_batch": 8,
    },
}
VOCAB, CLASSES = 1000, 10


def load_dqn():
    """examples/dqn_broken.py, imported (not run) as a module."""
    spec = importlib.util.spec_from_file_location("dqn_broken", ROOT / "examples" / "dqn_broken.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dqn_model(broken: bool, size: dict):
    import keras
    import numpy as np
    import tensorflow as tf

    dqn = load_dqn()

    class FixedQNetwork(dqn.QNetwork):
        """The example with its bug fixed: the Q-value of the action taken, selected with a
        one-hot mask, instead of the argmin index."""

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                actions = tf.cast(y, tf.int32)
                q_taken = tf.reduce_sum(y_pred * tf.one_hot(actions, dqn.NUM_ACTIONS), axis=1)
                loss = keras.losses.mean_squared_error(y, q_taken)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables, strict=True))
            self.loss_tracker.update_state(loss)
            return {"loss": self.loss_tracker.result()}

    rng = np.random.default_rng(0)
    n = size["dqn_batch"]
    x = rng.normal(size=(n, dqn.STATE_DIM)).astype("float32")
    y = rng.integers(0, dqn.NUM_ACTIONS, size=(n,)).astype("float32")
    model = dqn.QNetwork() if broken else FixedQNetwork()
    model.compile(optimizer=keras.optimizers.Adam(1e-3))
    model(x[:1])
    return model, (x, y)


def resnet_model(size: dict):
    import keras
    import numpy as np

    side, n = size["resnet_image"], size["resnet_batch"]
    model = keras.applications.ResNet50(weights=None, input_shape=(side, side, 3), classes=CLASSES)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=keras.losses.SparseCategoricalCrossentropy())
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, side, side, 3)).astype("float32")
    y = rng.integers(0, CLASSES, size=(n,)).astype("int32")
    return model, (x, y)


def transformer(size: dict, layers: int):
    """A Transformer encoder classifier: token + position embeddings, ``layers`` blocks of
    multi-head self-attention and a feed-forward net, each with residual and LayerNorm."""
    import keras
    import numpy as np

    seq, d, heads, ff = size["tf_seq"], size["tf_d"], size["tf_heads"], size["tf_ff"]

    class AddPosition(keras.layers.Layer):
        def build(self, input_shape):
            self.position = self.add_weight(shape=(input_shape[1], input_shape[2]), initializer="glorot_uniform")

        def call(self, x):
            return x + self.position

    tokens = keras.Input((seq,), dtype="int32")
    x = AddPosition()(keras.layers.Embedding(VOCAB, d)(tokens))
    for _ in range(layers):
        h = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=d // heads)(x, x)
        x = keras.layers.LayerNormalization()(x + keras.layers.Dropout(0.1)(h))
        f = keras.layers.Dense(d)(keras.layers.Dense(ff, activation="gelu")(x))
        x = keras.layers.LayerNormalization()(x + keras.layers.Dropout(0.1)(f))
    logits = keras.layers.Dense(CLASSES)(keras.layers.GlobalAveragePooling1D()(x))
    model = keras.Model(tokens, logits)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    rng = np.random.default_rng(0)
    n = size["tf_batch"]
    x = rng.integers(0, VOCAB, size=(n, seq)).astype("int32")
    y = rng.integers(0, CLASSES, size=(n,)).astype("int32")
    return model, (x, y)


def mlp(size: dict):
    import keras
    import numpy as np

    model = keras.Sequential(
        [keras.Input((32,))]
        + [keras.layers.Dense(u, activation="relu") for u in size["mlp_units"]]
        + [keras.layers.Dense(CLASSES)]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    rng = np.random.default_rng(0)
    n = size["mlp_batch"]
    return model, (rng.normal(size=(n, 32)).astype("float32"), rng.integers(0, CLASSES, size=(n,)).astype("int32"))


def warm_up() -> None:
    """Start TensorFlow's runtime (function tracing, the optimizer passes, the thread pools):
    one-time costs that are no part of any train step."""
    import tensorflow as tf

    @tf.function
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.nn.relu(tf.matmul(x, x)))
        return tape.gradient(y, x)

    f(tf.ones([4, 4]))
    with tf.GradientTape() as tape:
        v = tf.Variable(tf.ones([4]))
        y = tf.reduce_sum(v * v)
    tape.gradient(y, v)


def graph_step(model, batch):
    """``model.train_step`` compiled with ``tf.function`` (as ``fit`` / ``check_model``)."""
    import tensorflow as tf

    data = tuple(tf.convert_to_tensor(t) for t in batch)
    step = tf.function(model.train_step)
    return step, data


def eager_step(model):
    import tensorflow as tf

    loss_fn, optimizer = model.loss, model.optimizer

    def step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    return step


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "model",
        choices=[
            "dqn_broken",
            "dqn_fixed",
            "resnet50",
            "transformer",
            "eager_mlp",
            "eager_transformer",
            "eager_resnet50",
            "eager_transformer12",
        ],
    )
    parser.add_argument("mode", choices=["plain", "checked"])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--steps", type=int, default=10, help="eager loop: steps after the first, for the steady state")
    parser.add_argument(
        "--preload",
        action="store_true",
        help="checked: import the diagnosis and text-output modules before the timed step (what "
        "importing them when the session starts would give)",
    )
    args = parser.parse_args(argv)
    size = SIZES["smoke" if args.smoke else "full"]

    import keras
    import tensorflow as tf

    warm_up()
    session, preload_s = None, None
    if args.mode == "checked":
        from gradcheck.trace.capture.hooks import activate
        from gradcheck.trace.capture.session import Session

        if args.preload:
            start = time.perf_counter()
            import gradcheck.output.text
            import gradcheck.trace.diagnose.analyze  # noqa: F401

            preload_s = time.perf_counter() - start

        session = Session(steps=None, skip_updates=False)
        activate(session)  # before the model is built, as under the CLI (variable origins)

    start = time.perf_counter()
    if args.model.startswith("dqn"):
        model, batch = dqn_model(args.model == "dqn_broken", size)
    elif args.model in ("resnet50", "eager_resnet50"):
        model, batch = resnet_model(size)
    elif args.model in ("transformer", "eager_transformer12"):
        model, batch = transformer(size, size["tf_layers"])
    elif args.model == "eager_transformer":
        model, batch = transformer(size, size["eager_tf_layers"])
    else:
        model, batch = mlp(size)
    model.optimizer.build(model.trainable_variables)
    build_s = time.perf_counter() - start

    out = {"model": args.model, "mode": args.mode, "build_s": build_s, "error": None}
    if args.preload and session is not None:
        out["preload_s"] = preload_s
    if args.model.startswith("eager"):
        step = eager_step(model)
        x, y = (tf.convert_to_tensor(t) for t in batch)
        start, cpu = time.perf_counter(), time.process_time()
        step(x, y)
        out["first_call_s"] = time.perf_counter() - start
        out["first_call_cpu_s"] = time.process_time() - cpu
        times, cpus = [], []
        for _ in range(args.steps):
            start, cpu = time.perf_counter(), time.process_time()
            step(x, y)
            times.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        out["steady_s"] = statistics.median(times) if times else None
        out["steady_cpu_s"] = statistics.median(cpus) if cpus else None
        out["steady_all"] = times
    else:
        step, data = graph_step(model, batch)
        start, cpu = time.perf_counter(), time.process_time()
        try:
            step(data)
        except ValueError as error:  # the broken step: "No gradients provided for any variable"
            first = next((line for line in str(error).splitlines() if "No gradients" in line), str(error))
            out["error"] = f"ValueError: {first.strip()}"
        out["first_call_s"] = time.perf_counter() - start
        out["first_call_cpu_s"] = time.process_time() - cpu
        if out["error"] is None:
            out["graph_ops"] = len(step.get_concrete_function(data).graph.get_operations())
    if session is not None:
        from gradcheck.trace.capture.hooks import deactivate

        deactivate(session)
        out["findings"] = sorted({f.code for f in session.findings})
        out["internal_errors"] = session.internal_errors
    out["trainable_variables"] = len(model.trainable_variables)
    out["keras_version"] = keras.__version__
    out["tensorflow_version"] = tf.__version__
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
