"""The cross-cutting checks of `test_conformance.py` on the modules that
dm-sonnet 2.0.2 does not have (`descriptors.NOT_IN_SONNET_ROWS`)."""

import pytest

from tests import descriptors
from tests import test_conformance as conformance

_ROWS = descriptors.NOT_IN_SONNET_ROWS
_IDS = [d.name for d in _ROWS]
_CHECKS = {
    "tf_function_matches_eager": conformance.test_tf_function_matches_eager,
    "first_call_inside_tf_function":
        conformance.test_first_call_inside_tf_function,
    "unknown_batch_size": conformance.test_unknown_batch_size,
    "xla": conformance.test_xla,
    "checkpoint_restores_before_first_call":
        conformance.test_checkpoint_restores_before_first_call,
    "saved_model_round_trip": conformance.test_saved_model_round_trip,
    "deepcopy": conformance.test_deepcopy,
}


@pytest.mark.parametrize("check", list(_CHECKS), ids=list(_CHECKS))
@pytest.mark.parametrize("d", _ROWS, ids=_IDS)
def test_row(d, check, tmp_path):
  if check == "xla" and not d.xla:
    pytest.skip("the row does not compile with XLA")
  run = _CHECKS[check]
  if "tmp_path" in run.__code__.co_varnames[:run.__code__.co_argcount]:
    run(d, tmp_path)
  else:
    run(d)


def test_every_row_is_a_public_module_not_in_the_main_table():
  described = {type(d.create()) for d in descriptors.DESCRIPTORS}
  for d in _ROWS:
    cls = type(d.create())
    assert cls not in described
    assert cls.__name__ in descriptors.NOT_DESCRIBED
