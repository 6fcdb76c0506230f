"""Recurrent dropout: one dropout mask per sequence on a core's state."""

from typing import Any

import tensorflow as tf

from sonnet_like.core import checks
from sonnet_like.core import types
from sonnet_like.modules.recurrent import lstm as lstm_lib
from sonnet_like.modules.recurrent import rnn_core
from sonnet_like.modules.recurrent import state_checks


def _is_namedtuple(value: Any) -> bool:
  return hasattr(value, "_fields")


class _RecurrentDropoutWrapper(rnn_core.RNNCore):
  """Multiplies the base core's previous state by masks drawn per sequence.

  The masks are drawn in `initial_state` and travel in the state,
  `(core_state, masks)`, so the same units are dropped at every step of a
  sequence. A leaf of `rates` that is None leaves that part of the state
  alone (its mask is None).
  """

  def __init__(self, base_core: rnn_core.RNNCore, rates: Any,
               seed: int | None = None):
    super().__init__(name=base_core.name + "_recurrent_dropout")
    self._base_core = base_core
    self._rates = rates
    self._seed = seed

  def initial_state(self, batch_size: types.IntLike, **kwargs) -> tuple:
    """`(base_core.initial_state(batch_size), dropout masks)`."""
    core_state = self._base_core.initial_state(batch_size, **kwargs)

    def mask(state, rate):
      if rate is None:
        return None
      return tf.nn.dropout(tf.ones_like(state), rate=rate, seed=self._seed)

    return core_state, tf.nest.map_structure(mask, core_state, self._rates)

  def __call__(self, inputs: Any, prev_state: tuple) -> tuple[Any, tuple]:
    """One step of the base core on its masked previous state."""
    # A plain pair: an LSTMState (also a 2-tuple) is the core's state alone.
    if (not isinstance(prev_state, tuple) or _is_namedtuple(prev_state) or
        len(prev_state) != 2):
      raise self._state_error(prev_state)
    core_state, masks = prev_state
    try:
      tf.nest.assert_same_structure(self._rates, masks, check_types=False)
    except (ValueError, TypeError):
      raise self._state_error(prev_state) from None
    masked = tf.nest.map_structure(
        lambda s, m: s if m is None else s * m, core_state, masks)
    outputs, next_core_state = self._base_core(inputs, masked)
    return outputs, (next_core_state, masks)

  def _state_error(self, prev_state: Any) -> ValueError:
    return ValueError(
        f"{checks.describe(self)} expects prev_state to be (core_state, "
        "dropout_masks) as made by its initial_state(batch_size), with masks "
        f"of the structure {state_checks.describe_structure(self._rates)}, "
        f"got {state_checks.describe_structure(prev_state)}.")


def lstm_with_recurrent_dropout(
    hidden_size: int, dropout: float = 0.5, seed: int | None = None,
    **kwargs) -> tuple[rnn_core.RNNCore, lstm_lib.LSTM]:
  """An LSTM with dropout on its previous hidden state, for training.

  Returns two cores that share one set of variables: the first multiplies
  the previous hidden state `h` by a dropout mask drawn once per sequence (in
  `initial_state`) before computing the gates; the second is the plain LSTM,
  for evaluation.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> train_core, test_core = snt.lstm_with_recurrent_dropout(
      ...     4, dropout=0.25, name="dropout_example")
      >>> state = train_core.initial_state(2)
      >>> outputs, state = train_core(tf.ones([2, 3]), state)
      >>> outputs, _ = test_core(tf.ones([2, 3]), test_core.initial_state(2))
      >>> outputs.shape
      TensorShape([2, 4])

  Args:
    hidden_size: Hidden size of the LSTM.
    dropout: Probability of dropping each unit of the hidden state, in
      `[0, 1)`.
    seed: Optional seed for `tf.nn.dropout`.
    **kwargs: Passed to the `LSTM` constructor.

  Returns:
    `(train_core, test_core)`.

  Raises:
    ValueError: if `dropout` is not in `[0, 1)`.
  """
  if not 0 <= dropout < 1:
    raise ValueError("lstm_with_recurrent_dropout: dropout must be in the "
                     f"range [0, 1), got {dropout!r}.")
  lstm = lstm_lib.LSTM(hidden_size, **kwargs)
  rates = lstm_lib.LSTMState(hidden=dropout, cell=None)
  return _RecurrentDropoutWrapper(lstm, rates, seed), lstm
