"""Tranche progD of the mutation benchmark: its manifest and the transform it added
(`synthetic_env`). No TensorFlow, no network."""

from __future__ import annotations

import sys

from benchmarks.mutation import adapt, manifest

TRANCHE = manifest.HERE / "tranches" / "progD.toml"


def test_synthetic_env_serves_gym_with_the_old_api():
    src = "import gym\nenv = gym.make('LunarLanderContinuous-v2')\n"
    out = adapt.adapt(src, [{"transform": "synthetic_env", "obs_dim": 8, "act_dim": 2, "high": 2.0, "steps": 3}])
    saved = sys.modules.get("gym")
    ns: dict = {}
    try:
        exec(compile(out, "<adapted>", "exec"), ns)
    finally:
        if saved is None:
            sys.modules.pop("gym", None)
        else:
            sys.modules["gym"] = saved
    env = ns["env"]
    assert env.observation_space.shape == (8,) and env.action_space.shape == (2,)
    assert env.action_space.high.tolist() == [2.0, 2.0] and env.unwrapped is env
    obs = env.reset()  # the old API: the observation alone
    assert obs.shape == (8,) and obs.dtype.name == "float32"
    dones = []
    for _ in range(3):
        obs, reward, done, info = env.step([1.0, -1.0])  # the old API: a 4-tuple
        dones.append(done)
        assert reward == -2.0 and info == {}
    assert dones == [False, False, True]  # an episode of `steps` steps
    assert env.reset().shape == (8,) and not env.step([0.0, 0.0])[2]
