"""Smoke test of an installed sonnet_like (a wheel, no extras).

Run from a folder outside the source tree: every public name resolves, and
each scenario trains a few steps with its default settings. Exits non-zero
on the first failure.
"""

import importlib
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

import sonnet_like as snt  # pylint: disable=g-import-not-at-top

print(f"sonnet_like {snt.__version__} from {os.path.dirname(snt.__file__)}")


def public_names(module, prefix):
  """Resolves `__all__` of `module` and of every public subpackage."""
  count = 0
  for name in module.__all__:
    value = getattr(module, name)  # AttributeError if it does not resolve.
    count += 1
    if hasattr(value, "__all__") and hasattr(value, "__path__"):
      count += public_names(value, f"{prefix}.{name}")
  return count


print(f"public names resolved: {public_names(snt, 'snt')}")
rng = np.random.default_rng(0)
results = {}

# Supervised, defaults: arrays in, a sparse cross-entropy loss.
x = rng.random((64, 4)).astype("float32")
y = (x.sum(1) > 2).astype("int32")
loss = lambda logits, labels: tf.nn.sparse_softmax_cross_entropy_with_logits(
    labels, logits)
with tempfile.TemporaryDirectory() as folder:
  history = snt.scenarios.Supervised(num_steps=20, save_dir=folder,
                                     save_every=10)(
      snt.nets.MLP([32, 2]), snt.optimizers.Adam(1e-2), loss, (x, y),
      eval_data=(x, y))
  assert os.path.exists(os.path.join(folder, "history.json"))
results["Supervised"] = history.eval["accuracy"][-1]

# GAN, defaults, on a Gaussian blob.
data = rng.normal(size=(256, 2)).astype("float32")
history = snt.scenarios.GAN(num_steps=5)(
    snt.nets.MLP([16, 2]), snt.nets.MLP([16, 1]), snt.optimizers.Adam(1e-3),
    snt.optimizers.Adam(1e-3), data)
results["GAN"] = history.train["g_loss"][-1]

# REINFORCE and PPO on the in-graph CartPole.
history = snt.scenarios.REINFORCE(num_env_steps=8 * 50, rollout_length=50)(
    snt.nets.MLP([16, 2]), snt.nets.MLP([16, 1]), snt.optimizers.Adam(1e-3),
    snt.envs.CartPole(8))
results["REINFORCE"] = history.train["loss"][-1]
history = snt.scenarios.PPO(num_env_steps=2 * 8 * 128)(
    snt.nets.MLP([16, 2]), snt.nets.MLP([16, 1]), snt.optimizers.Adam(3e-4),
    snt.envs.CartPole(8))
results["PPO"] = history.train["loss"][-1]

# DQN, defaults (updates start after 1,000 transitions).
history = snt.scenarios.DQN(num_env_steps=1_200)(
    snt.nets.MLP([16, 2]), snt.optimizers.Adam(1e-3), snt.envs.CartPole(4))
results["DQN"] = history.train["loss"][-1]

# SAC, defaults (updates start after 1,000 transitions), on the in-graph
# Pendulum.
history = snt.scenarios.SAC(num_env_steps=1_200)(
    snt.nets.MLP([16, 2]), snt.nets.MLP([16, 1]), snt.optimizers.Adam(1e-3),
    snt.envs.Pendulum(4))
results["SAC"] = history.train["loss"][-1]

for name, value in results.items():
  assert np.isfinite(value), (name, value)
  print(f"{name}: trained, last value {value:.4g}")

for banned in ("tests", "examples", "gymnasium"):
  assert banned not in sys.modules, f"importing sonnet_like loaded {banned}"
try:
  importlib.import_module("tests")
except ImportError:
  pass
else:
  raise AssertionError("a 'tests' package is importable next to the wheel")
print("smoke test of the installed wheel: OK")
