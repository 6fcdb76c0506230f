"""load_weights: a run's best or last checkpoint, raw or averaged, into a
model; and the run's history read back (History.load, plot) from its folder,
during the run and after it."""

import os

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt

_X = np.random.default_rng(0).normal(size=(32, 4)).astype("float32")
_Y = (_X[:, 0] > 0).astype("int32")


def _model(sizes=(8, 3)):
  model = snt.nets.MLP(list(sizes), name="mlp")
  model(tf.zeros([1, 4]))
  return model


class _ReadsTheHistory(snt.scenarios.Hook):
  """Reads the run's history back while it runs (after the save of step 4)."""

  def step_end(self, scenario, step, logs):
    if step == 6:
      self.seen = snt.scenarios.History.load(scenario.save_dir).train["step"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
  """A finished run with `ema` and `keep_best` whose best is its first
  evaluation (the largest loss), so the best and the last differ."""
  save_dir = str(tmp_path_factory.mktemp("load") / "run")
  reader = _ReadsTheHistory()
  train = snt.scenarios.Supervised(
      num_steps=8, eval_every=2, save_every=4, log_every=2, batch_size=8,
      ema=0.5, keep_best="loss", best_mode="max", progress=False,
      tensorboard=False, save_dir=save_dir, hooks=[reader],
      export_dir=os.path.join(save_dir, "export"))
  model = _model()
  train(model, snt.optimizers.SGD(0.1),
        lambda logits, labels: tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels, logits), (_X, _Y), eval_data=(_X, _Y))
  return save_dir, train, model, reader


def _values(model):
  return [v.numpy() for v in model.trainable_variables]


def test_best_averages_are_what_the_export_holds(run):
  save_dir = run[0]
  model = _model()
  path = snt.scenarios.load_weights(model, save_dir, "best", ema=True)
  assert path == os.path.join(save_dir, "best", "ckpt-2")
  serve = tf.saved_model.load(os.path.join(save_dir, "export")).signatures[
      "serving_default"]
  np.testing.assert_allclose(model(_X), serve(inputs=_X)["outputs"],
                             rtol=1e-6, atol=1e-6)


def test_last_raw_and_averaged_weights_are_the_runs(run):
  save_dir, train, trained, _ = run
  raw, averaged = _model(), _model()
  assert snt.scenarios.load_weights(raw, save_dir) == os.path.join(
      save_dir, "ckpt-8")
  snt.scenarios.load_weights(averaged, save_dir, "last", ema=True)
  for a, b in zip(_values(raw), _values(trained)):
    np.testing.assert_array_equal(a, b)
  with train.ema_weights():
    for a, b in zip(_values(averaged), _values(trained)):
      np.testing.assert_array_equal(a, b)
  best = _model()
  snt.scenarios.load_weights(best, save_dir, "best")
  assert not np.array_equal(_values(best)[0], _values(raw)[0])


def test_a_model_that_does_not_match_is_refused_and_left_alone(run):
  save_dir = run[0]
  other = _model((8, 4))
  before = _values(other)
  with pytest.raises(ValueError, match=(
      r"^load_weights: the model MLP 'mlp' does not match 'model' in "
      r"checkpoint .*ckpt-8 \(another architecture or size\?\)\. Unmatched "
      r"paths:\n  model/.*checkpoint float32\[3\], program float32\[4\]")):
    snt.scenarios.load_weights(other, save_dir)
  for a, b in zip(_values(other), before):
    np.testing.assert_array_equal(a, b)
  with pytest.raises(ValueError, match=r"^load_weights: the model MLP 'mlp' "
                     r"has no variables yet\. Call it once on a batch"):
    snt.scenarios.load_weights(snt.nets.MLP([8, 3], name="mlp"), save_dir)
  with pytest.raises(ValueError, match=r"holds no model named 'generator'; "
                     r"its entries are \[.*'model', 'model_ema'"):
    snt.scenarios.load_weights(_model(), save_dir, name="generator")
  with pytest.raises(ValueError, match=r"^load_weights: which must be "
                     r"'best', 'last' or a step \(an int\), got 'worst'\.$"):
    snt.scenarios.load_weights(_model(), save_dir, "worst")
  with pytest.raises(FileNotFoundError, match=r"holds no readable checkpoint "
                     r"of step 5 \(ckpt-5\)"):
    snt.scenarios.load_weights(_model(), save_dir, 5)


def test_a_run_without_ema_or_keep_best_says_so(tmp_path):
  model = _model()
  tf.train.Checkpoint(model=model).write(str(tmp_path / "ckpt-3"))
  assert snt.scenarios.load_weights(_model(), str(tmp_path), 3).endswith(
      "ckpt-3")
  with pytest.raises(ValueError, match=r"holds no weight averages of 'model' "
                     r"\(the run was trained without ema=\)"):
    snt.scenarios.load_weights(_model(), str(tmp_path), ema=True)
  with pytest.raises(FileNotFoundError, match=r"holds no best checkpoint "
                     r"\(best/best\.json\)\. The run keeps one with "
                     r"keep_best=METRIC"):
    snt.scenarios.load_weights(_model(), str(tmp_path), "best")


def test_the_history_reads_back_during_and_after_the_run(run):
  save_dir, train, _, reader = run
  assert reader.seen == [2, 4]  # As of the save of step 4.
  loaded = snt.scenarios.History.load(save_dir)
  assert loaded.to_dict() == train.history.to_dict()
  pytest.importorskip("matplotlib")
  path = snt.scenarios.plot(save_dir)
  assert path == os.path.join(save_dir, "learning_curves.png")
  assert os.path.getsize(path) > 10_000
