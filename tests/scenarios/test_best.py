"""Best: the one notion of "best" of EarlyStopping and keep_best."""

import pytest

from sonnet_like.scenarios import best


def test_default_mode_and_min_delta():
  loss = best.Best("X", "monitor", "val_loss", min_delta=0.1)
  assert loss.mode == "min"
  assert loss.update({"val_loss": 1.0}, step=1)
  assert not loss.update({"val_loss": 0.95}, step=2)  # Within min_delta.
  assert loss.update({"val_loss": 0.8}, step=3)
  assert (loss.value, loss.step) == (0.8, 3)
  accuracy = best.Best("X", "monitor", "top1_acc", mode=None)
  assert accuracy.mode == "max"
  assert accuracy.update({"top1_acc": 0.2}, 1)
  assert not accuracy.update({"top1_acc": 0.1}, 2)


def test_an_unknown_metric_is_named_with_the_available_ones():
  judge = best.Best("PPO", "keep_best", "return")
  with pytest.raises(best.MetricNotFoundError) as caught:
    judge.update({"mean_return": 1.0, "loss": 2.0}, 1)
  assert str(caught.value) == ("PPO: keep_best 'return' is not an eval "
                               "metric; available: ['loss', 'mean_return'].")
  assert isinstance(caught.value, KeyError)  # As EarlyStopping raised.


def test_bad_mode():
  with pytest.raises(ValueError, match="^GAN: best_mode must be 'min' or "
                     "'max', got 'high'.$"):
    best.Best("GAN", "keep_best", "fid", "high", mode_argument="best_mode")


def test_nan_is_never_best_and_a_nan_best_is_beaten():
  judge = best.Best("X", "monitor", "loss")
  assert not judge.update({"loss": float("nan")}, 1)
  assert judge.update({"loss": 5.0}, 2) and judge.step == 2
  assert not judge.update({"loss": float("nan")}, 3)
  judge.value = float("nan")  # As restored from an older checkpoint.
  assert judge.update({"loss": 7.0}, 4)
