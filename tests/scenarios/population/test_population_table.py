"""A population is its solo runs at every surface, for every scenario row
(`population_table.ROWS`): member i of a population of seeds (3, 5) gives
what the solo run of seed i gives wherever a user looks (its train logs
and evaluations, `summary`, `best`, `keep_best` and `kept_best()`,
`member(i)`, its whole state, the export at the end, a hook, the CSV and
TensorBoard logs, a dry run), and what has no single answer refuses in
one sentence that names `member(`. The population looked at is one whose
first process was killed (SIGKILL) after a save and which the same
command then resumed, so its surfaces are those of a resumed run; that a
resume ends to the bit where the uninterrupted run does is
`test_supervised_population.py`'s and, scenario by scenario for solo
runs, `test_scenario_table.py`'s."""

import csv
import glob
import os
import signal
import textwrap

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
import tests
from tests import export_common
from tests import fork_server
from sonnet_like.scenarios.population import single
from sonnet_like.scenarios.run_folder import keep_best
from tests.scenarios.population import population_table
from tests.scenarios.population import run_state
from tests.scenarios import test_scenario_table

SEEDS = population_table.SEEDS


class _Seen(snt.scenarios.Hook):
  """What a hook is given at each evaluation: every member's values."""

  def __init__(self):
    self.members = []

  def eval_end(self, scenario, step, metrics):
    self.members.append({k: list(v) for k, v in metrics.members.items()})


def _loop(row, folder, **more):
  return dict(num_steps=row.num_steps, eval_every=row.eval_every,
              log_every=row.eval_every, save_every=row.eval_every,
              save_dir=os.path.join(folder, "run"),
              export_dir=os.path.join(folder, "export"),
              keep_best=row.metric, progress=False,
              hooks=[snt.scenarios.CSVLogger()] + more.pop("hooks", []),
              **more)


def _csv(folder, kind="eval"):
  with open(os.path.join(folder, "run", "logs", f"{kind}.csv")) as f:
    return list(csv.DictReader(f))


def _tensorboard(folder, tag):
  """The values logged under `tag`, by step, from every process's file (a
  file's name orders processes that started in one second by pid)."""
  values = []
  for path in glob.glob(os.path.join(folder, "run", "logs", "eval",
                                     "events.*")):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        if value.tag == tag:
          values.append((event.step, float(tf.make_ndarray(value.tensor))))
  return [value for _, value in sorted(values)]


def _served(folder, inputs):
  """Every signature of the export in `folder`, on `inputs` (those it
  takes, in its dtypes)."""
  loaded = tf.saved_model.load(os.path.join(folder, "export"))
  served = {}
  for name, function in sorted(loaded.signatures.items()):
    specs = function.structured_input_signature[1]
    outputs = function(**{key: tf.constant(inputs[key], spec.dtype)
                          for key, spec in specs.items()})
    served[name] = {key: value.numpy() for key, value in outputs.items()}
  return served


def _weights(models):
  return {name: [v.numpy() for v in model.variables]
          for name, model in sorted(models.items())}


def _models(scenario, member=None):
  """The weights of the scenario's models by name: a solo run's, or
  member `member`'s, the same from `member(i)` and `as_member(i)`."""
  if member is None:
    return _weights(scenario.models())
  with scenario.as_member(member):
    answered = _weights(scenario.models())
  given = scenario.member(member)
  given = _weights(given if isinstance(given, dict) else {
      next(iter(answered)): given})
  assert given.keys() == answered.keys()
  for name in given:
    for a, b in zip(given[name], answered[name]):
      np.testing.assert_array_equal(a, b, err_msg=name)
  return given


def _same(a, b):
  """Whether two answers of `member(i)`/`best(...)` are the same models."""
  a, b = (x if isinstance(x, dict) else {"": x} for x in (a, b))
  return {k: id(v) for k, v in a.items()} == {k: id(v) for k, v in b.items()}


def _assert_close(got, want, atol, what):
  np.testing.assert_allclose(np.asarray(got, np.float64),
                             np.asarray(want, np.float64), atol=atol,
                             rtol=atol, err_msg=what)


@pytest.mark.parametrize("row", population_table.ROWS, ids=lambda r: r.name)
def test_member_i_is_the_solo_run_of_seed_i_at_every_surface(row, tmp_path):
  # A process of its own killed after a save, then the same command again.
  folder = str(tmp_path / "population")
  _killed_after_a_save(row, folder, tmp_path / "killed.py")
  seen = _Seen()
  population = row.train(population=list(SEEDS),
                         **_loop(row, folder, hooks=[seen]))
  solos, solo_folders = [], []
  for seed in SEEDS:
    solo_folders.append(str(tmp_path / f"solo_{seed}"))
    solos.append(row.train(seed=seed, **_loop(row, solo_folders[-1])))
  history = population.history
  assert seen.members, "the resumed run evaluated nothing"
  for i, solo in enumerate(solos):
    who = f"{row.name} member {i} (seed {SEEDS[i]})"
    # Train logs and evaluations, and what a hook was given.
    assert history.member_eval["step"] == solo.history.eval["step"]
    for name, values in solo.history.eval.items():
      if name != "step":
        _assert_close([v[i] for v in history.member_eval[name]], values,
                      row.atol, f"{who}: eval {name}")
        # The resumed process's hook saw the evaluations after the save.
        _assert_close([e[name][i] for e in seen.members],
                      values[-len(seen.members):], row.atol,
                      f"{who}: a hook's eval {name}")
    # Beside the solo run's logs, each member's "finite" verdict; the
    # rate of steps is the whole population's.
    assert history.member_train.keys() - {"finite"} == (
        solo.history.train.keys() - {"steps_per_second"})
    for name, values in solo.history.train.items():
      if name not in ("step", "steps_per_second"):
        _assert_close([v[i] for v in history.member_train[name]], values,
                      row.atol, f"{who}: train {name}")
    # The CSV and TensorBoard logs: a column and a tag per member.
    metric = f"{row.metric}/member_{i}"
    _assert_close([float(r[metric]) for r in _csv(folder)],
                  [float(r[row.metric]) for r in _csv(solo_folders[i])],
                  row.atol, f"{who}: eval.csv")
    _assert_close(_tensorboard(folder, metric),
                  _tensorboard(solo_folders[i], row.metric), row.atol,
                  f"{who}: TensorBoard")
    # Its models, and the export at the end (each at its own best).
    for name, weights in _models(solo).items():
      for a, b in zip(_models(population, i)[name], weights):
        _assert_close(a, b, row.atol, f"{who}: {name}")
    # Everything else its future depends on: the optimizers' slots and
    # steps, replay buffers, environments and episodes, the random stream.
    assert run_state.largest_difference(
        run_state.state(population, i), run_state.state(solo)) < row.atol, who
    served = _served(folder, row.serving_inputs)
    for name, outputs in _served(solo_folders[i],
                                 row.serving_inputs).items():
      for key, value in outputs.items():
        _assert_close(served[name][key][i], value, row.atol,
                      f"{who}: export {name} {key}")
  # The distribution, the best member, and each member's kept best.
  last = [solo.history.eval[row.metric][-1] for solo in solos]
  summary = population.summary(row.metric)
  _assert_close([summary.mean, summary.count], [np.mean(last), len(SEEDS)],
                row.atol, "summary")
  better = max if population.checkpointing.best_mode == "max" else min
  best = population.best(row.metric)
  assert any(_same(best, population.member(i)) for i, value in enumerate(last)
             if abs(value - better(last)) <= row.atol), (row.name, last)
  with population.kept_best() as record:
    for i, solo_folder in enumerate(solo_folders):
      solo_best = keep_best.record(os.path.join(solo_folder, "run"))
      assert record["steps"][i] == solo_best["step"]
      _assert_close(record["values"][i], solo_best["value"], row.atol,
                    f"member {i}'s kept best")
  # No silent template: each single answer refuses, naming member(i).
  for call, function in row.single_answers(population).items():
    with pytest.raises(single.PopulationError, match=r"member\(i\)"):
      function()
  # ... and inside as_member(i) the scenario answers as member i.
  with population.as_member(1):
    assert population.models().keys() == solos[1].models().keys()
    for name, weights in _models(solos[1]).items():
      for a, b in zip(_models(population)[name], weights):
        _assert_close(a, b, row.atol, f"as_member(1): {name}")
  if row.served_without_sonnet_like:
    _assert_served_without_sonnet_like(population, folder)
  # A dry run checks the population's steps, evaluation, save, resume and
  # export in seconds (on the rows whose machinery no other row's dry run
  # goes through, `Row.dry_run`).
  if not row.dry_run:
    return
  dry = row.train(population=list(SEEDS),
                  **_loop(row, str(tmp_path / "dry"), dry_run=True))
  assert dry.history.stop_reason == "dry run"
  assert not os.path.exists(tmp_path / "dry" / "export")


_KILLED = textwrap.dedent("""
    import signal, sys
    sys.path.insert(0, {root!r})
    import conftest  # TensorFlow set up as in the test process.
    from tests.scenarios.population import population_table as rows
    from tests.scenarios.population import test_population_table as t
    from tests.scenarios.population import test_supervised_population as s
    row = next(r for r in rows.ROWS if r.name == sys.argv[2])
    row.train(population=list(rows.SEEDS), **t._loop(
        row, sys.argv[1], hooks=[s._Signal(signal.SIGKILL, int(sys.argv[3]))]))
    print("NOT KILLED", flush=True)
""")


def _killed_after_a_save(row, folder, script):
  """The row's population in a process of its own (forked from the shared
  server), killed by SIGKILL one step after its save at `num_steps -
  eval_every`: the resume trains the last `eval_every` steps again."""
  script.write_text(_KILLED.format(root=tests.ROOT))
  at = row.num_steps - row.eval_every + 1
  killed = fork_server.shared(test_scenario_table.KILLED_PRELOAD).popen(
      [script, folder, row.name, str(at)], dict(os.environ))
  _, killed_err = killed.communicate(timeout=300)
  assert killed.returncode == -signal.SIGKILL, killed_err[-3000:]


def _assert_served_without_sonnet_like(population, folder):
  """The export, loaded in a Python where sonnet_like is not: output [i]
  acts as member i's actor (at its kept best, where it was exported)."""
  observations = np.random.default_rng(1).uniform(
      -1, 1, (64, 3)).astype(np.float32)
  served, = export_common.load_and_call([(
      os.path.join(folder, "export"), "serving_default",
      {"observation": observations})])
  for i in range(len(SEEDS)):
    with population.kept_best(), population.as_member(i):
      np.testing.assert_allclose(served["action"][i],
                                 population.act(observations), rtol=1e-5,
                                 atol=1e-6)
