"""The reference DQN (examples/dqn_fixed.py): its train step learns, gradcheck finds
nothing in it, and (slow) it solves CartPole-v1 within its episode budget."""

from __future__ import annotations

import importlib.util
import io
import json
import sys

import numpy as np
import pytest

from tests.conftest import ROOT, run_cli

SCRIPT = ROOT / "examples" / "dqn_fixed.py"


@pytest.fixture(scope="module")
def dqn():
    """examples/dqn_fixed.py imported as a module (it only trains when run as a script)."""
    spec = importlib.util.spec_from_file_location("dqn_fixed", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["dqn_fixed"] = module  # dataclasses look their module up here
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("dqn_fixed", None)


def fixed_batch(n=64, state_dim=4, num_actions=2, seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.normal(size=(n, state_dim)).astype("float32"),
        rng.integers(0, num_actions, size=n).astype("int32"),
        np.ones(n, "float32"),
        rng.normal(size=(n, state_dim)).astype("float32"),
        (rng.random(n) < 0.1).astype("float32"),
    )


def test_train_step_reduces_td_error_on_a_fixed_batch(dqn):
    import keras

    keras.utils.set_random_seed(0)
    agent = dqn.make_agent()
    train_fn = dqn.compiled_train_step(agent)
    batch = fixed_batch()
    target_before = [w.numpy().copy() for w in agent.target.weights]
    before = float(agent.td_loss(batch))
    for _ in range(100):
        train_fn(batch)
    after = float(agent.td_loss(batch))
    assert after < 0.2 * before, (before, after)
    # Only the online network trains; the target network changes only when synced.
    for weight, old in zip(agent.target.weights, target_before):
        np.testing.assert_array_equal(weight.numpy(), old)
    assert {id(v) for v in agent.trainable_variables} == {id(v) for v in agent.online.trainable_variables}
    agent.sync_target()
    for target_weight, online_weight in zip(agent.target.weights, agent.online.weights):
        np.testing.assert_array_equal(target_weight.numpy(), online_weight.numpy())


def test_every_online_variable_gets_a_gradient(dqn):
    import tensorflow as tf

    agent = dqn.make_agent()
    states, actions, rewards, next_states, dones = fixed_batch()
    targets = agent.td_targets(rewards, next_states, dones)
    with tf.GradientTape() as tape:
        q = agent.online(states, training=True)
        q_taken = tf.reduce_sum(q * tf.one_hot(actions, agent.num_actions), axis=1)
        loss = agent.huber(targets, q_taken)
    grads = tape.gradient(loss, agent.online.trainable_variables)
    assert grads and all(g is not None for g in grads)


def test_epsilon_greedy_returns_an_int_on_both_branches(dqn):
    agent = dqn.make_agent()
    rng = np.random.default_rng(0)
    state = np.zeros(4, "float32")
    explore = [dqn.epsilon_greedy(agent.online, state, 1.0, 2, rng) for _ in range(20)]
    exploit = [dqn.epsilon_greedy(agent.online, state, 0.0, 2, rng) for _ in range(3)]
    assert all(type(a) is int and a in (0, 1) for a in explore + exploit)
    assert set(explore) == {0, 1}
    assert len(set(exploit)) == 1
    assert dqn.epsilon_at(0) == dqn.EPSILON_START
    assert dqn.epsilon_at(10 * dqn.EPSILON_DECAY_STEPS) == pytest.approx(dqn.EPSILON_END)


def test_gradcheck_finds_nothing_in_the_reference():
    proc = run_cli("--format", "json", "examples/dqn_fixed.py", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (record,) = json.loads(proc.stdout)["files"]
    assert record["status"] == "checked"
    assert record["steps_checked"] >= 1
    assert record["findings"] == []


def test_short_run_trains_and_plots(dqn, tmp_path):
    pytest.importorskip("gymnasium")
    out = io.StringIO()
    plot = tmp_path / "curve.png"
    result = dqn.main(max_episodes=60, seed=0, log_every=20, plot_path=str(plot), stream=out)
    assert result.episodes == 60 and not result.solved
    assert result.gradient_steps > 0, "training starts after the warm-up"
    assert len(result.returns) == 60
    text = out.getvalue()
    assert "episode   20 |" in text and "NOT solved within the budget of 60 episodes" in text
    if importlib.util.find_spec("matplotlib") is not None:
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_reference_solves_cartpole_within_its_budget(dqn):
    pytest.importorskip("gymnasium")
    out = io.StringIO()
    result = dqn.main(seed=dqn.SEED, stream=out)
    print(out.getvalue().splitlines()[-1])  # "solved: N episodes, ..." (shown with -rP / -s)
    assert result.solved, out.getvalue()
    assert result.episodes <= dqn.MAX_EPISODES
    assert result.final_mean >= dqn.SOLVED_MEAN_RETURN
