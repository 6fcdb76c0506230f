"""Many seeds at once: a learning-rate sweep on digits, every result a
distribution.

    python examples/population_digits.py            # 3 rates x 8 seeds
    python examples/population_digits.py --dry_run  # checks it all in seconds

One `snt.scenarios.Supervised` trains a population: every learning rate of
`--learning_rates` with every seed of `--seeds` (24 members by default), in
one compiled call. Each member is exactly the run `seed=` would give alone
(its own first weights, data order and Adam state). At the end it prints,
per learning rate, the members' held-out accuracy as an interquartile mean
with a 95% bootstrap confidence interval, names the best member, and
exports the whole population as one SavedModel (every output stacked on a
leading member axis) to <save_dir>/export. Stopped at any time, the same
command resumes the population from its last checkpoint.
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # pylint: disable=g-import-not-at-top

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]
import _digits  # pylint: disable=g-import-not-at-top
import sonnet_like as snt  # pylint: disable=g-import-not-at-top


def cross_entropy(logits: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def main(argv=None) -> dict:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--learning_rates", type=float, nargs="+",
                      default=[3e-3, 1e-3, 3e-4])
  parser.add_argument("--seeds", type=int, default=8,
                      help="seeds per learning rate (0, 1, ...)")
  parser.add_argument("--num_steps", type=int, default=600)
  parser.add_argument("--steps_per_call", type=int, default=20)
  parser.add_argument("--save_dir", default="runs/population_digits")
  parser.add_argument("--dry_run", action="store_true",
                      help="check the whole run first, in seconds: a few "
                      "steps, an evaluation, a save, a resume and an export "
                      "in a temporary folder, then stop")
  args = parser.parse_args(argv)

  (x_train, y_train), (x_test, y_test) = _digits.load(flat=True)
  population = snt.scenarios.Population.grid(
      seeds=range(args.seeds), learning_rate=args.learning_rates)
  train = snt.scenarios.Supervised(
      num_steps=args.num_steps, batch_size=64,
      steps_per_call=args.steps_per_call, eval_every=args.num_steps,
      save_every=args.num_steps // 3, save_dir=args.save_dir,
      export_dir=os.path.join(args.save_dir, "export"),
      log_every=args.steps_per_call * 5, population=population,
      dry_run=args.dry_run)
  # Unbuilt: every member builds its own weights from its seed.
  model = snt.nets.MLP([64, 64, 10], name="mlp")
  history = train(model, snt.optimizers.Adam(1e-3), cross_entropy,
                  (x_train, y_train), eval_data=(x_test, y_test))
  if args.dry_run:
    return history.eval
  summaries = train.summary("accuracy")
  print(snt.scenarios.summary_table(
      summaries, title=f"Held-out accuracy of {population.size} members "
      f"after {train.step} steps", label="setting"))
  accuracies = history.member_eval["accuracy"][-1]
  best = max(range(population.size), key=accuracies.__getitem__)
  print(f"Best member: {best} ({dict(population.group(best))}, seed "
        f"{population.seeds[best]}), accuracy {accuracies[best]:.2%}; "
        f"train.best('accuracy') gives its model.")
  return summaries


if __name__ == "__main__":
  main()
