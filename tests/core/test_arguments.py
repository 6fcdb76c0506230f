"""Argument checks shared by modules, environments and scenarios."""

import re

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.core import arguments


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "3", None])
def test_positive_int_refuses(value):
  with pytest.raises(ValueError, match=r"^Thing: size must be a positive int, "
                     rf"got {value!r}\.$"):
    arguments.check_positive_int("Thing", "size", value)


def test_positive_int_accepts_ints_numpy_ints_and_optional_none():
  arguments.check_positive_int("Thing", "size", 3)
  arguments.check_positive_int("Thing", "size", np.int64(3))
  arguments.check_positive_int("Thing", "size", None, optional=True)


@pytest.mark.parametrize("scenario, kwargs, hint", [
    (snt.scenarios.Supervised, {"num_steps": 10, "eval_evry": 5},
     "did you mean 'eval_every'"),
    (snt.scenarios.Supervised, {"num_steps": 10, "bach_size": 5},
     "did you mean 'batch_size'"),
    (snt.scenarios.GAN, {"num_steps": 10, "n_critc": 5},
     "did you mean 'n_critic'"),
    (snt.scenarios.PPO, {"num_env_steps": 10, "rollout_lenght": 4},
     "did you mean 'rollout_length'"),
    (snt.scenarios.DQN, {"num_env_steps": 10, "zzz": 4}, "It takes: "),
])
def test_misspelt_scenario_keyword_names_the_scenario_and_suggests(
    scenario, kwargs, hint):
  with pytest.raises(TypeError) as info:
    scenario(**kwargs)
  message = str(info.value)
  assert message.startswith(f"{scenario.__name__}: got an unexpected keyword")
  assert hint in message


def test_keyword_names_follow_kwargs_to_the_base_class():
  names = arguments.keyword_names(snt.scenarios.Supervised)
  assert {"batch_size", "eval_every", "save_dir", "num_steps"} <= set(names)


def test_positive_int_returns_the_value_as_given():
  value = np.int64(3)
  assert arguments.check_positive_int("Thing", "size", value) is value
  assert arguments.check_positive_int("Thing", "size", None,
                                      optional=True) is None


@pytest.mark.parametrize("dtype", ["float16", tf.float32, np.float64])
def test_floating_dtype_returns_a_tf_dtype(dtype):
  assert arguments.check_floating_dtype("Thing", dtype) == tf.as_dtype(dtype)


@pytest.mark.parametrize("dtype", [tf.int32, "string", "nonsense", None])
def test_floating_dtype_refuses_with_both_error_types(dtype):
  """A TypeError (as recurrent cores raised) and a ValueError (as the vector
  quantizers raised), with one wording."""
  with pytest.raises(TypeError, match=r"^Thing: dtype must be a "
                     rf"floating-point dtype, got {re.escape(repr(dtype))}\.$"):
    arguments.check_floating_dtype("Thing", dtype)
  with pytest.raises(ValueError):
    arguments.check_floating_dtype("Thing", dtype)


def test_b_init_without_bias_has_our_and_sonnets_words():
  arguments.check_no_b_init_without_bias("Thing", True, object())
  arguments.check_no_b_init_without_bias("Thing", False, None)
  with pytest.raises(ValueError, match=r"^Thing: b_init must be None when "
                     r"with_bias=False, got 'zeros'\. When not using a bias "
                     r"the b_init must be None\.$"):
    arguments.check_no_b_init_without_bias("Thing", False, "zeros")
