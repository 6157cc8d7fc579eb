"""The static engine: exact on the fixture files, the rule examples, the real-world cases and
the examples; silent on every look-alike that trains correctly; robust on any input.

Fixture files mark each culprit line with ``# expect: GC1xx`` (the rule examples' syntax);
the findings must be exactly those (line, code) pairs.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from gradcheck.findings import CHECKED, ERROR
from gradcheck.rules import all_rules, get_rule
from gradcheck.rules._base import Example
from gradcheck.static import check_file, check_source
from gradcheck.static.engine import STATIC_NOTE
from tests import realworld_check

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "static"
#: The causes the static engine finds in every rule example; the others need a run (GC111's
#: and GC301's examples are partly beyond it).
STATIC_CODES = {
    "GC101",
    "GC102",
    "GC103",
    "GC104",
    "GC105",
    "GC106",
    "GC107",
    "GC108",
    "GC109",
    "GC110",
    "GC111",
    "GC113",
    "GC114",
    "GC115",
    "GC116",
}


def expected(source: str) -> list[tuple[int, str]]:
    return sorted(Example("", "", source).expected)


def found(source: str, path: str = "example.py") -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in check_source(source, path))


def _params(paths) -> list:
    return [pytest.param(p, id=p.relative_to(ROOT).as_posix()) for p in sorted(paths)]


@pytest.mark.parametrize("path", _params(FIXTURES.glob("broken/*.py")))
def test_broken_fixture_is_exact(path):
    source = path.read_text(encoding="utf-8")
    assert expected(source), "a broken fixture must mark its culprits"
    assert found(source, str(path)) == expected(source)


@pytest.mark.parametrize("path", _params(FIXTURES.glob("clean/*.py")))
def test_clean_fixture_is_silent(path):
    findings = check_source(path.read_text(encoding="utf-8"), str(path))
    assert not findings, [f"{f.line}: {f.code} {f.message}" for f in findings]


def _rule_examples() -> list:
    out = []
    for rule in all_rules():
        for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid)):
            for n, example in enumerate(examples):
                out.append(pytest.param(example, id=f"{rule.code}-{kind}-{n}"))
    return out


@pytest.mark.parametrize("example", _rule_examples())
def test_rule_examples(example):
    """Every statically visible cause in the rules' examples is found at its line, and
    nothing else is reported (the other causes are left to the trace engine)."""
    got = found(example.source)
    marked = expected(example.source)
    assert set(got) <= set(marked), f"not expected: {sorted(set(got) - set(marked))}"
    if example.static:  # else a cause only a run shows (``Example.static``)
        assert {m for m in marked if m[1] in STATIC_CODES} <= set(got)


#: How many real-world GC1xx cases the static engine must diagnose exactly: a ratchet, the
#: count measured on the current set, so a case that was exact cannot silently regress
#: (raise it as recall improves). Issue 14's target, 80 %, was met on the set it was
#: measured on (62/69); the unseen batches since (270-293) brought it to 71/93, 76 %; issue
#: 25 (GC111 from TensorFlow's registry, a first derivative taken after the tape) to 73/93;
#: the 4NN batch's mechanisms (a variable read by a ``tf.custom_gradient``, filtered sources,
#: the dead end of a dropped output, ``tf.compat.v1.scatter_*``, a target computed in the
#: request) from 90 to 95 of the 124 cases then in the set; batches 8 and 9 (a named layer's
#: weights written with ``assign``, ``back_prop=False`` in a ``tf.function``, a function
#: called before the tape named at its call) to 117 of 162; batch 12's first run (9 of its 12
#: GC1xx cases exact) to 140 of 191; batch 13's first run (8 of 13) and a source made on
#: another tape (581) and a write at integer positions computed from the model (578) to 150
#: of 204; batch 14 and the progD round (issue 39, round 3) leave it at 157 of 217; batch 15
#: (4 of its 10 GC1xx cases on the first run) and a value taken to NumPy outside the tape
#: counted as data (1002, 557) bring it to 163 of 227; issue 39's round 4 (the file's own model
#: instances set together and stepped by ``model.optimizer``: 1004, 478, 753; a weight added to
#: a built-in layer from outside: 825) to 167; batch 16 (6 of its 11 GC1xx cases on the first
#: run) to 173 of 238; issue 39's round 5 (a model's constructor arguments kept as its
#: attributes, a ``compute_loss`` override and a step's helper read in the tape, an optimizer's
#: update under a tape that is asked again, a stateful RNN's ``states`` written, NumPy's
#: generators as host data, a teacher's targets made before the tape: 1007, 488, 1060, 531,
#: 1054, 1058, 272, 577, 455, 456, 583) to 184.
RECALL_FLOOR = 191


def _realworld_paths(kind: str) -> list[Path]:
    """The project's cases (tests/realworld) and any newer one of the shared set, with a
    ``.json`` (a case being written has none yet)."""
    return [p for p in realworld_check.cases(kind) if p.with_suffix(".json").exists()]


def _gc1xx(script: Path) -> bool:
    """A case whose every expected cause is a GC1xx one (no gradient at all): the static
    engine's scope. The GC2xx/GC301 cases (a gradient that exists but is zero, non-finite,
    unstopped or wrong: the ``3NN`` cases) are numerical facts of a run, out of its scope."""
    wanted = realworld_check.expected_findings(realworld_check.expectation(script))
    return bool(wanted) and all(code.startswith("GC1") for want in wanted for code in want["codes"])


def _recall_paths() -> list[Path]:
    return [p for p in _realworld_paths("cases") if _gc1xx(p)]


def _realworld(kind: str) -> list:
    """The cases (or controls); a case the trace engine gets wrong too (``known_miss``, a
    first run of an unseen batch) may be wrong here the same way: not strict."""
    out = []
    for p in _realworld_paths(kind):
        expected = realworld_check.expectation(p) if kind == "cases" else {}
        miss = expected.get("known_miss")
        marks = [pytest.mark.xfail(strict=False, reason=f"the trace engine's known miss: {miss}")] if miss else []
        if expected.get("static_known_miss"):  # this engine's own first-run miss, as recorded
            marks = [pytest.mark.xfail(strict=True, reason=f"known miss: {expected['static_known_miss']}")]
        out.append(pytest.param(p, id=p.stem, marks=marks))
    return out


def realworld_problems(script: Path) -> tuple[list[str], list[str]]:
    """(culprits missed, findings that are wrong) for one real-world case, by code and line
    only: the static engine names models and layers (``the variables of model``), not the
    variable paths a run shows, so the case's variable lists are not compared."""
    expected = realworld_check.expectation(script)
    findings = check_source(script.read_text(encoding="utf-8"), str(script))
    missed, used = [], set()
    for want in realworld_check.expected_findings(expected):
        line = want["line"]
        # as realworld_check: in the shared form one of the findings with a code must be at
        # the line (two unwatched tensors may each be reported where it was made)
        mine = {
            i
            for i, f in enumerate(findings)
            if f.code in want["codes"] and (line is None or not want["exact"] or f.line == line)
        }
        if line is not None and not any(findings[i].line == line for i in mine):
            mine = set()
        if not mine:
            missed.append(f"{'/'.join(want['codes'])}@{want['line']}")
        used |= mine
    wrong = [f"{f.code}@{f.line}: {f.message}" for i, f in enumerate(findings) if i not in used]
    return missed, wrong


@pytest.mark.parametrize("script", _realworld("cases"))
def test_realworld_case_has_no_wrong_finding(script):
    """A case may be beyond the static engine (a cause only a run shows), but whatever it
    reports must be the case's cause, at its line."""
    _missed, wrong = realworld_problems(script)
    assert not wrong


def test_realworld_recall():
    """At least ``RECALL_FLOOR`` of the real-world GC1xx cases (``_gc1xx``: the ``0NN`` and
    ``2NN`` ones) are diagnosed exactly: every culprit found with its code at its line, and
    nothing else (``python -m tests.test_static_engine`` prints the score case by case)."""
    scripts = _recall_paths()
    inexact = {s.name: realworld_problems(s) for s in scripts}
    inexact = {name: p for name, p in inexact.items() if p[0] or p[1]}
    exact = len(scripts) - len(inexact)
    assert exact >= RECALL_FLOOR, f"{exact}/{len(scripts)} exact; not: {sorted(inexact)}"


@pytest.mark.parametrize("script", _realworld("clean"))
def test_realworld_control(script):
    findings = check_source(script.read_text(encoding="utf-8"), str(script))
    assert not findings, [f"{f.line}: {f.code} {f.message}" for f in findings]


@pytest.mark.parametrize("path", _params((ROOT / "examples").rglob("*.py")))
def test_examples(path):
    """``gradcheck --static examples/``: each broken file's statically visible cause is
    found at its ``# expect:`` line (the gallery's marks); fixed files give nothing."""
    source = path.read_text(encoding="utf-8")
    got = found(source, str(path))
    if path.stem.endswith("_fixed"):
        assert not got
    marked = expected(source)
    if marked:
        assert set(got) <= set(marked)
        assert {m for m in marked if m[1] in STATIC_CODES} <= set(got)


# --- what a finding says ------------------------------------------------------------

DQN = textwrap.dedent(
    """\
    import keras
    import tensorflow as tf


    class QNetwork(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                metric = tf.math.argmin(y_pred, axis=1)
                loss = keras.losses.mean_squared_error(y, metric)
            grads = tape.gradient(loss, self.trainable_variables)
            return {"loss": loss}
    """
)


def test_finding_fields_match_the_trace_engine_vocabulary():
    (finding,) = check_source(DQN, "dqn.py")
    rule = get_rule("GC101")
    assert (finding.code, finding.name, finding.severity) == ("GC101", rule.name, "error")
    assert (finding.path, finding.line, finding.column) == ("dqn.py", 10, 22)
    assert (finding.end_line, finding.end_column) == (10, 52)  # the whole call, end exclusive
    assert finding.call == "tf.math.argmin"
    assert finding.variables == ["self"]
    assert finding.message == rule.format_message(call="tf.math.argmin", variables="the variables of self")
    assert finding.fix == rule.fix_text(arg="y_pred")
    assert "tf.gather(y_pred, actions, batch_dims=1)" in finding.fix
    assert finding.notes[-1] == STATIC_NOTE
    assert any("self(...) (line 9)" in note for note in finding.notes)
    assert finding.op is None and finding.chain == []


def test_columns_count_characters_not_bytes():
    source = DQN.replace("metric = tf.math.argmin", "métrique = tf.math.argmin").replace("(y, metric)", "(y, métrique)")
    (finding,) = check_source(source, "dqn.py")
    line = source.splitlines()[finding.line - 1]
    assert line[finding.column - 1 : finding.end_column - 1] == "tf.math.argmin(y_pred, axis=1)"


def test_one_finding_per_culprit_with_every_starved_source():
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        with tf.GradientTape() as tape:
            loss = tf.round(a * b)
        grads = tape.gradient(loss, [a, b])
        """
    )
    (finding,) = check_source(source, "vars.py")
    assert finding.variables == ["a", "b"]
    assert "2 variables (a, b)" in finding.message


def test_check_file_reports_unreadable_files_instead_of_raising(tmp_path):
    missing = check_file(str(tmp_path / "missing.py"))
    assert missing.status == ERROR and missing.error.code == "GC901"
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n    pass\n")
    assert check_file(str(broken)).error.code == "GC901"
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"\xff\xfe\x00\x00garbage")
    assert check_file(str(binary)).status == ERROR
    fine = tmp_path / "fine.py"
    fine.write_text(DQN)
    result = check_file(str(fine))
    assert result.status == CHECKED and [f.code for f in result.findings] == ["GC101"]


@pytest.mark.parametrize(
    "source",
    [
        "",
        "x = (",
        "import tensorflow as tf\nwith tf.GradientTape() as tape:\n    pass\ntape.gradient()\n",
        "import tensorflow as tf\ndef f(tape):\n    return tape.gradient(*[], **{})\n",
        "gradient = lambda: gradient()\ngradient()\n",
        "class A(A): pass\nA().fit()\n",
        "def f(): return f()\nwith tf.GradientTape() as t:\n    y = f()\nt.gradient(y, f())\n",
        "import tensorflow as tf\nwith tf.GradientTape() as t:\n    for x in x: x = x(x)\nt.gradient(x, x)\n",
    ],
)
def test_odd_code_never_raises(source):
    assert check_source(source, "odd.py") == []


def test_deep_and_large_code_stays_bounded():
    chain = "x = model(x)\n" + "x = tf.round(x) + x\n" * 3000
    source = "import tensorflow as tf\nwith tf.GradientTape() as tape:\n" + textwrap.indent(chain, "    ")
    source += "tape.gradient(x, model.trainable_variables)\n"
    assert check_source(source, "big.py") == []
    nested = "import tensorflow as tf\n" + "f(" * 5000 + ")" * 5000 + "\ntape.gradient(x, y)\n"
    assert check_source(nested, "nested.py") == []


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
def test_never_raises_on_generated_programs():
    hypothesis = pytest.importorskip("hypothesis")
    hypothesmith = pytest.importorskip("hypothesmith")

    # a long run: GRADCHECK_FUZZ_EXAMPLES=5000 python -m pytest tests/test_static_engine.py -k generated_programs
    examples = int(os.environ.get("GRADCHECK_FUZZ_EXAMPLES", "60"))

    @hypothesis.settings(max_examples=examples, deadline=None, suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(hypothesmith.from_grammar())
    def check(source):
        check_source("import tensorflow as tf\n" + source + "\ntape.gradient(loss, model.trainable_variables)\n")

    check()


@pytest.mark.parametrize(
    ("qualname", "code"),
    [
        ("tensorflow.math.argmax", "GC101"),
        ("keras.ops.argsort", "GC101"),
        ("tensorflow.raw_ops.Round", "GC102"),
        ("tensorflow.experimental.numpy.floor", "GC102"),
        ("keras.backend.stop_gradient", "GC104"),
        ("numpy.mean", "GC105"),
        ("numpy.random.default_rng", "GC105"),
        ("keras.ops.convert_to_numpy", "GC105"),
        ("tensorflow.numpy_function", "GC106"),
        ("tensorflow.random.stateless_categorical", "GC107"),
        ("keras.random.categorical", "GC107"),
        ("tensorflow.sort", None),
        ("tensorflow.py_function", None),
        ("tensorflow.experimental.numpy.mean", None),
        ("keras.losses.categorical_crossentropy", None),
        ("keras.utils.to_categorical", None),
        ("tensorflow.math.sign", None),
    ],
)
def test_catalog(qualname, code):
    from gradcheck.static import catalog

    api = catalog.lookup(qualname)
    assert (api.code if api is not None and api.kind == catalog.CUT else None) == code


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("tensorflow.compat.v1.py_func", "tensorflow.py_func"),
        ("tensorflow.compat.v1.keras.layers.Dense", "keras.layers.Dense"),
        ("tensorflow.keras.backend.argmax", "keras.backend.argmax"),
        ("tf_keras.layers.Dense", "keras.layers.Dense"),
        ("keras.src.ops.numpy.argmax", "keras.ops.numpy.argmax"),
        ("tensorflow.math.argmax", "tensorflow.math.argmax"),
    ],
)
def test_one_spelling_per_api(spelling, canonical):
    from gradcheck.static.names import canonical as fold

    assert fold(spelling) == canonical


def _print_realworld_score() -> int:
    """``python -m tests.test_static_engine``: the static engine on every real-world case
    and control, one line each, and the totals."""
    exact = 0
    scripts = _recall_paths()
    per_code: dict[str, list[int]] = {}
    for script in _realworld_paths("cases"):
        missed, wrong = realworld_problems(script)
        if script not in scripts:
            if wrong:
                print(f"WRONG {script.name} (not a GC1xx case)")
                for line in wrong:
                    print(f"        wrong {line}")
            continue
        ok = not missed and not wrong
        exact += ok
        for code in sorted(
            {c for w in realworld_check.expected_findings(realworld_check.expectation(script)) for c in w["codes"]}
        ):
            per_code.setdefault(code, [0, 0])[0] += ok
            per_code[code][1] += 1
        print(f"{'ok   ' if ok else 'MISS ' if not wrong else 'WRONG'} {script.name}")
        for line in [*(f"missed {m}" for m in missed), *(f"wrong {w}" for w in wrong)]:
            print(f"        {line}")
    print("by expected code (a case that accepts two codes counts under both):")
    print("  " + ", ".join(f"{code} {ok}/{n}" for code, (ok, n) in sorted(per_code.items())))
    noisy = 0
    controls = _realworld_paths("clean")
    for script in controls:
        findings = check_source(script.read_text(encoding="utf-8"), str(script))
        noisy += bool(findings)
        if findings:
            print(f"NOISY {script.name}: " + "; ".join(f"{f.code}@{f.line}" for f in findings))
    print(
        f"{exact}/{len(scripts)} GC1xx cases exact ({exact / max(len(scripts), 1):.0%}); "
        f"{noisy}/{len(controls)} controls noisy"
    )
    return 0 if exact >= RECALL_FLOOR and not noisy else 1


if __name__ == "__main__":
    raise SystemExit(_print_realworld_score())


ACTING_PASS = """\
import numpy as np
import tensorflow as tf

policy = tf.keras.Sequential([tf.keras.layers.Dense(2)])
optimizer = tf.keras.optimizers.Adam(1e-3)


def train(states, actions):
    with tf.GradientTape() as tape:
        logits = policy(states)
        logits = LOGITS
        ce = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        loss = ce(tf.cast(actions, tf.int32), logits)
    grads = tape.gradient(loss, policy.trainable_variables)
    optimizer.apply_gradients(zip(grads, policy.trainable_variables))


for episode in range(3):
    state = np.random.rand(1, 4).astype("float32")
    probs = policy.predict(state)
    action = np.random.choice(2, p=tf.nn.softmax(probs[0]).numpy())
    train(state, np.array([action]))
"""


def test_an_acting_pass_predict_is_no_cause_beside_a_cut_inside_the_tape():
    # The rollout's predict feeds only the sampled action the loss is computed for; once the
    # tape's own path is cut, the cut is the finding, not the acting pass (issue 25).
    findings = check_source(ACTING_PASS.replace("LOGITS", "tf.round(logits)"), "acting.py")
    assert [(f.code, f.line) for f in findings] == [("GC102", 11)]
    assert check_source(ACTING_PASS.replace("LOGITS", "logits"), "acting.py") == []


# --- GC113: the value ``v.assign(x)`` returns -------------------------------------------

ASSIGN_IN_TAPE = """\
import tensorflow as tf

buffer = tf.Variable(0.0, shape=tf.TensorShape(None), trainable=False)
model = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)


def train_step(x, y):
    with tf.GradientTape() as tape:
        pred = model(x)
BODY
        loss = tf.reduce_mean((pred - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


@pytest.mark.parametrize(
    "body",
    [
        # the variable as written, read back through the value ``assign`` returns
        "        pred = buffer.assign(tf.cast(pred, buffer.dtype)) * 1.0  # expect: GC113",
        "        pred = tf.identity(buffer.assign_add(pred))  # expect: GC113",
        # the same bug spelled as a write, then a read of the variable
        "        buffer.assign(pred)  # expect: GC113\n        pred = buffer + 0.0",
    ],
)
def test_a_value_read_back_from_an_assign_in_the_tape_is_cut(body):
    source = ASSIGN_IN_TAPE.replace("BODY", body)
    assert found(source) == expected(source)


@pytest.mark.parametrize(
    "body",
    [
        # a statistic kept in a variable, never read back into the loss
        "        buffer.assign(tf.reduce_mean(pred))",
        "        _ = buffer.assign(tf.reduce_mean(pred))",
        # written but asked not to return the value
        "        buffer.assign(tf.reduce_mean(pred), read_value=False)",
        # the value written does not come from the model: nothing of it is cut
        "        pred = pred * buffer.assign(tf.ones_like(pred))",
    ],
)
def test_an_assign_the_loss_does_not_read_back_is_silent(body):
    assert found(ASSIGN_IN_TAPE.replace("BODY", body)) == []


def test_an_assign_outside_the_tape_and_an_optimizer_like_update_are_silent():
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        w = tf.Variable(tf.ones((3, 1)))
        shadow = tf.Variable(tf.zeros((3, 1)), trainable=False)


        def step(x, y, lr=0.1):
            shadow.assign(w * 2.0)  # before the tape: what the tape reads is a constant, as intended
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((x @ w + x @ shadow - y) ** 2)
            g = tape.gradient(loss, [w])[0]
            w.assign_sub(lr * g)  # the update itself, after the request
            return w.assign(tf.clip_by_norm(w, 1.0))
        """
    )
    assert found(source) == []


def test_reading_the_assigned_variable_itself_keeps_its_own_gradient():
    # ``v.assign(x)`` returns ``v``: a read of it, so ``v`` gets a gradient (``x`` does not)
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        v = tf.Variable(1.0)
        x = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            loss = v.assign(v * 2.0) ** 2
        grads = tape.gradient(loss, [v])
        """
    )
    assert found(source) == []


# --- GC115: ``model.variables`` with non-trainable variables ------------------------------

ALL_VARIABLES = """\
import tensorflow as tf
from tensorflow.keras import layers

model = tf.keras.Sequential([layers.Dense(8), LAYER, layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x, training=True) - y) ** 2)
    SOURCES
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


@pytest.mark.parametrize(
    "layer",
    [
        "layers.Dropout(0.3)",  # Keras 3: a SeedGenerator, whose state is a non-trainable variable
        "layers.Dropout(rate=dropout_rate)",  # a rate the code does not spell: not 0 to draw anything
        "layers.GaussianNoise(0.1)",
        "layers.LSTM(8, return_sequences=True)",  # recurrent layers always make one
        "layers.Bidirectional(layers.GRU(8))",
        "layers.RandomFlip()",
        "layers.MultiHeadAttention(2, 4, dropout=0.1)",
        "layers.BatchNormalization()",
    ],
)
def test_model_variables_with_non_trainable_state_is_gc115(layer):
    source = ALL_VARIABLES.replace("LAYER", layer).replace(
        "SOURCES", "grads = tape.gradient(loss, model.variables)  # expect: GC115"
    )
    assert found(source) == expected(source)


def test_a_named_list_of_every_variable_is_reported_where_it_is_built():
    source = ALL_VARIABLES.replace("LAYER", "layers.Dropout(0.5)").replace(
        "SOURCES",
        "params = model.weights  # expect: GC115\n    grads = tape.gradient(loss, params)",
    )
    assert found(source) == expected(source)


@pytest.mark.parametrize(
    ("layer", "sources"),
    [
        # every variable is trainable: ``variables`` is ``trainable_variables``
        ("layers.Dense(4)", "grads = tape.gradient(loss, model.variables)"),
        # rate 0: the layer draws nothing, so makes no seed generator
        ("layers.Dropout(0.0)", "grads = tape.gradient(loss, model.variables)"),
        ("layers.MultiHeadAttention(2, 4)", "grads = tape.gradient(loss, model.weights)"),
        # the trainable ones kept
        ("layers.Dropout(0.5)", "grads = tape.gradient(loss, [v for v in model.variables if v.trainable])"),
        (
            "layers.Dropout(0.5)",
            "params = [v for v in model.variables if v.trainable]\n    grads = tape.gradient(loss, params)",
        ),
        (
            "layers.LSTM(8)",
            "params = model.variables\n    params = model.trainable_variables\n    grads = tape.gradient(loss, params)",
        ),
        # every variable listed for saving or logging, not as sources
        (
            "layers.BatchNormalization()",
            "tf.print([tf.norm(v) for v in model.variables])\n"
            "    saved = {v.name: v.numpy() for v in model.weights}\n"
            "    grads = tape.gradient(loss, model.trainable_variables)",
        ),
    ],
)
def test_model_variables_without_non_trainable_state_or_not_as_sources_is_silent(layer, sources):
    source = ALL_VARIABLES.replace("LAYER", layer).replace("SOURCES", sources)
    assert found(source) == []


def test_a_keras_2_dropout_holds_no_variable():
    # tf_keras (Keras 2): Dropout makes no SeedGenerator, so ``variables`` are the trainable ones
    source = (
        ALL_VARIABLES.replace("import tensorflow as tf\n", "import tensorflow as tf\nimport tf_keras\n")
        .replace("from tensorflow.keras import layers", "from tf_keras import layers")
        .replace("tf.keras.", "tf_keras.")
        .replace("LAYER", "layers.Dropout(0.3)")
        .replace("SOURCES", "grads = tape.gradient(loss, model.variables)")
    )
    assert found(source) == []


def test_a_name_is_looked_up_in_the_function_that_asks():
    # ``params`` is this function's parameter: the module's ``params = model.variables`` is
    # another list
    source = (
        ALL_VARIABLES.replace("LAYER", "layers.Dropout(0.5)")
        .replace("def train_step(x, y):", "params = model.variables\n\n\ndef train_step(x, y, params):")
        .replace("SOURCES", "grads = tape.gradient(loss, params)")
    )
    assert found(source) == []
