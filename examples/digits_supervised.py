"""Train a small ConvNet on scikit-learn's digits with snt.scenarios.Supervised.

    python examples/digits_supervised.py            # trains, or resumes
    python examples/digits_supervised.py            # again: says it is done
    python examples/digits_supervised.py --dry_run  # checks it all in seconds

Shows a progress bar, evaluates on the held-out test set, keeps checkpoints
and TensorBoard logs under runs/digits (`tensorboard --logdir runs/digits/logs`)
and draws the learning curves to runs/digits/learning_curves.png. Stop it with
Ctrl-C at any time and run the same command to carry on from the last step.
At the end it exports the model for serving to runs/digits/export (with
`--keep_best accuracy`, the best evaluation's, kept in runs/digits/best), a
SavedModel that plain TensorFlow loads (no sonnet_like needed):
`tf.saved_model.load("runs/digits/export").signatures["serving_default"]`
takes `inputs` (images `[batch, 8, 8, 1]` in [0, 1]) and returns `outputs`
(logits), `probabilities` and `classes`.

`--ema 0.99` evaluates and exports an average of the weights,
`--accumulate_steps 4` makes one update of every 4 steps' gradients (steps
count micro-batches), `--schedule warmup_cosine` warms the learning rate up
over the first 5% of the steps, then decays it (docs/guides/training.md).
"""

import argparse
import importlib.util
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # pylint: disable=g-import-not-at-top

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]
import _digits  # pylint: disable=g-import-not-at-top
import sonnet_like as snt  # pylint: disable=g-import-not-at-top


class ShiftedDigits(snt.scenarios.Supervised):
  """Supervised training on randomly shifted images (+-1 pixel).

  The shifts come from `self.rng`, the scenario's checkpointed generator, so
  a resumed run draws the same shifts as an uninterrupted one.
  """

  def train_step(self, data):
    inputs, targets = data
    padded = tf.pad(inputs, [[0, 0], [1, 1], [1, 1], [0, 0]])
    offset = self.rng.uniform([2], 0, 3, dtype=tf.int32)
    size = tf.shape(inputs)
    shifted = tf.slice(padded, [0, offset[0], offset[1], 0], size)
    return super().train_step((shifted, targets))


def conv_net() -> snt.Module:
  return snt.Sequential([
      snt.Conv2D(32, 3, name="conv_0"), tf.nn.relu,
      snt.Conv2D(64, 3, stride=2, name="conv_1"), tf.nn.relu,
      snt.Flatten(),
      snt.Linear(128, name="hidden"), tf.nn.relu,
      snt.Linear(10, name="logits"),
  ], name="conv_net")


def cross_entropy(logits: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def schedule(name: str | None,
             num_steps: int) -> snt.scenarios.schedules.Schedule | None:
  """The named warm-up schedule over `num_steps` steps, or None."""
  if name is None:
    return None
  warmup = max(1, num_steps // 20)
  if name == "warmup_constant":
    return snt.scenarios.schedules.warmup_constant(warmup)
  if name == "warmup_step":  # A tenth at 2/3 of the run.
    return snt.scenarios.schedules.warmup_step(warmup, 2 * num_steps // 3)
  return getattr(snt.scenarios.schedules, name)(warmup, num_steps - warmup)


def main(argv=None) -> float:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--num_steps", type=int, default=3000)
  parser.add_argument("--batch_size", type=int, default=64)
  parser.add_argument("--steps_per_call", type=int, default=10)
  parser.add_argument("--eval_every", type=int, default=250)
  parser.add_argument("--save_every", type=int, default=500)
  parser.add_argument("--learning_rate", type=float, default=1e-3)
  parser.add_argument("--save_dir", default="runs/digits")
  parser.add_argument("--precision", default="float32",
                      choices=["float32", "mixed_float16", "mixed_bfloat16"],
                      help="compute dtype of the model (variables, loss and "
                      "optimizer stay float32; float16 scales the loss)")
  parser.add_argument("--export_dir", default=None,
                      help="where to export the model (default: "
                      "<save_dir>/export)")
  parser.add_argument("--ema", type=float, default=None,
                      help="decay of the weights' average used to evaluate "
                      "and export (e.g. 0.99)")
  parser.add_argument("--accumulate_steps", type=int, default=1,
                      help="average the gradients of this many steps per "
                      "update")
  parser.add_argument("--schedule", default=None, choices=[
      "warmup_constant", "warmup_linear", "warmup_cosine", "warmup_step"],
                      help="learning-rate warm-up (5%% of the steps) and decay")
  parser.add_argument("--dry_run", action="store_true",
                      help="check the whole run first, in seconds: a few "
                      "steps, an evaluation, a save, a resume and an export "
                      "in a temporary folder, then stop")
  parser.add_argument("--keep_best", default=None, metavar="METRIC",
                      help="keep the checkpoint of the best evaluation by "
                      "this metric (e.g. accuracy) in <save_dir>/best and "
                      "export it")
  args = parser.parse_args(argv)
  export_dir = args.export_dir or os.path.join(args.save_dir, "export")

  (x_train, y_train), (x_test, y_test) = _digits.load()
  tf.random.set_seed(0)
  model = conv_net()
  optimizer = snt.optimizers.Adam(args.learning_rate)
  train = ShiftedDigits(
      num_steps=args.num_steps, batch_size=args.batch_size,
      steps_per_call=args.steps_per_call, eval_every=args.eval_every,
      save_every=args.save_every, save_dir=args.save_dir,
      export_dir=export_dir, log_every=args.steps_per_call * 5,
      precision=args.precision, ema=args.ema,
      accumulate_steps=args.accumulate_steps,
      learning_rate_schedule=schedule(args.schedule, args.num_steps),
      dry_run=args.dry_run, keep_best=args.keep_best)
  history = train(model, optimizer, cross_entropy, (x_train, y_train),
                  eval_data=(x_test, y_test))
  if args.dry_run:
    return history.eval["accuracy"][-1]
  metrics = train.evaluate(model, (x_test, y_test), cross_entropy)
  png = os.path.join(args.save_dir, "learning_curves.png")
  history.plot(png, title="ConvNet on digits")
  print(f"Test accuracy {metrics['accuracy']:.2%}, test loss "
        f"{metrics['loss']:.4f} after {train.step} steps "
        f"({len(y_test)} held-out digits).")
  print(f"Checkpoints:     {args.save_dir}/ckpt-*")
  if importlib.util.find_spec("tensorboard"):  # The examples extra has it.
    print(f"TensorBoard:     tensorboard --logdir {args.save_dir}/logs")
  else:
    print(f"TensorBoard:     {args.save_dir}/logs (to view: pip install "
          "tensorboard)")
  print(f"Learning curves: {png}")
  print(f"Export:          {export_dir} (tf.saved_model.load, no "
        "sonnet_like needed)")
  return metrics["accuracy"]


if __name__ == "__main__":
  main()
