"""The child that runs dm-sonnet's error cases; telling kernel errors apart."""

import os

import pytest
import tensorflow as tf

from tests import error_cases
from tests import sonnet_process
from tests.outside import framework

pytest.importorskip("sonnet")

# The cases the child runs in these tests (`SonnetProcess(__name__)`).
CASES = [
    error_cases.ErrorCase("runs", lambda snt: snt.Linear(2)),
    error_cases.ErrorCase("raises_in_use", lambda snt: snt.Linear(2),
                          lambda snt, m: m(error_cases.x(3))),
    error_cases.ErrorCase("aborts_in_use", lambda snt: snt.Linear(2),
                          lambda snt, m: os.abort()),
    error_cases.ErrorCase("kernel_error",
                          lambda snt: error_cases.built(snt.Linear(2), 2, 3),
                          lambda snt, m: m(error_cases.x(2, 4))),
]


def test_outcomes_abort_and_the_next_case_runs():
  process = sonnet_process.SonnetProcess(__name__)
  try:
    ran, raised, aborted, kernel, after = (
        process.outcome(name) for name in
        ("runs", "raises_in_use", "aborts_in_use", "kernel_error", "runs"))
  finally:
    process.close()
  assert (ran.phase, ran.error, ran.crashed) == (None, None, None)
  assert (raised.phase, raised.error) == ("use", ValueError)
  assert "must have rank >= 2" in raised.message
  assert (aborted.phase, aborted.error) == ("use", None)
  assert aborted.crashed == "signal 6"
  assert kernel.phase == "use" and issubclass(kernel.error, tf.errors.OpError)
  assert (after.phase, after.crashed) == (None, None)  # A new child.


def test_from_kernel_tells_a_kernel_error_from_our_checks():
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  errors = []
  for call in (lambda: tf.linalg.matmul(tf.ones([2, 5]), tf.ones([4, 3])),
               lambda: error_cases.built(snt.Linear(3), 2, 4)(
                   error_cases.x(2, 5))):
    with pytest.raises(tf.errors.InvalidArgumentError) as raised:
      call()
    errors.append(raised.value)
  kernel, ours = errors
  assert framework.from_kernel(kernel)
  assert not framework.from_kernel(ours)
