"""Speed of the GAN scenario against a hand-written tf.function GAN loop.

The same MLP generator and discriminator (2-D ring of Gaussians, batch 256,
Keras Adam) trained in one process by

  (a) a hand-written tf.function running K cycles per call (a tf.range loop;
      each cycle: n_critic discriminator updates on fresh real batches from
      the same tf.data iterator and latent codes from a tf.random.Generator,
      then one generator update),
  (b) snt.scenarios.GAN with steps_per_call=K (which adds the NaN/Inf guard,
      per-replica loss scaling, the step counter and hooks),

for two configurations: a non-saturating GAN (n_critic=1) and WGAN-GP
(n_critic=5, interpolates drawn from the generator), with K = 1 and 50, in
interleaved rounds. Tracing and the first call are timed apart from the
steady-state speed. Prints median steps/s and the ratio (b)/(a).
`--hidden 1024` makes both networks compute-bound (two hidden layers of
that width). `--configs`, `--ks` and `--checks` narrow or widen the grid;
each `--checks` value (the scenario's `nonfinite_check`) is a contender.

    python benchmarks/bench_gan.py [--steps 2000] [--rounds 5] [--hidden 128]
        [--configs non-saturating wgan-gp] [--ks 1 50] [--checks auto]
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _ROOT)
import _timing  # pylint: disable=g-import-not-at-top
import sonnet_like as snt  # pylint: disable=g-import-not-at-top
from sonnet_like.scenarios import data as data_lib  # pylint: disable=g-import-not-at-top
from sonnet_like.scenarios.gan import data as gan_data  # pylint: disable=g-import-not-at-top
from sonnet_like.scenarios.gan import evaluation as gan_eval  # pylint: disable=g-import-not-at-top
from sonnet_like.scenarios.gan import losses as gan_losses  # pylint: disable=g-import-not-at-top

BATCH, LATENT = 256, 16
CONFIGS = {
    "non-saturating": dict(loss="non_saturating", n_critic=1,
                           gradient_penalty=0.0),
    "wgan-gp": dict(loss="wasserstein", n_critic=5, gradient_penalty=10.0),
}


def _nets(hidden):
  tf.random.set_seed(0)
  return (snt.nets.MLP([hidden, hidden, 2], name="generator"),
          snt.nets.MLP([hidden, hidden, 1], name="discriminator"))


def handwritten(data, config, steps, k, hidden):
  """Returns (seconds to first call, steady steps/s)."""
  generator, discriminator = _nets(hidden)
  g_opt, d_opt = keras.optimizers.Adam(1e-4), keras.optimizers.Adam(1e-4)
  # The pipeline the GAN scenario builds from arrays.
  iterator = iter(data_lib.training_dataset("bench", "data", data, BATCH,
                                            seed=0,
                                            check=gan_data.check_element))
  rng = tf.random.Generator.from_seed(0)
  d_loss_fn, g_loss_fn = gan_losses.get(config["loss"])
  weight, n_critic = config["gradient_penalty"], config["n_critic"]
  critic = lambda x: discriminator(x)[:, 0]

  @tf.function
  def train(n):
    g_loss = tf.constant(0.0)
    for _ in tf.range(n):
      for _ in range(n_critic):
        real = next(iterator)
        fake = generator(rng.normal([BATCH, LATENT]))
        eps = rng.uniform([BATCH]) if weight else None
        with tf.GradientTape() as tape:
          losses = d_loss_fn(critic(real), critic(fake))
          if weight:
            losses += weight * gan_losses.wgan_gp_penalty(critic, real, fake,
                                                          eps)
          d_loss = tf.reduce_mean(losses)
        variables = discriminator.trainable_variables
        d_opt.apply_gradients(zip(tape.gradient(d_loss, variables),
                                  variables))
      with tf.GradientTape() as tape:
        g_loss = tf.reduce_mean(g_loss_fn(critic(generator(
            rng.normal([BATCH, LATENT])))))
      variables = generator.trainable_variables
      g_opt.apply_gradients(zip(tape.gradient(g_loss, variables), variables))
    return g_loss

  return _timing.time_calls(train, steps, k)


def scenario(data, config, steps, k, hidden, check="auto"):
  clock = _timing.StepClock()
  generator, discriminator = _nets(hidden)
  gan = snt.scenarios.GAN(num_steps=steps, batch_size=BATCH,
                          latent_size=LATENT, steps_per_call=k,
                          log_every=steps, progress=False,
                          catch_signals=False, hooks=[clock],
                          nonfinite_check=check, **config)
  start = time.perf_counter()
  gan(generator, discriminator, keras.optimizers.Adam(1e-4),
      keras.optimizers.Adam(1e-4), data)
  return clock.result(start)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=2000)
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--hidden", type=int, default=128)
  parser.add_argument("--configs", nargs="+", choices=list(CONFIGS),
                      default=list(CONFIGS))
  parser.add_argument("--ks", nargs="+", type=int, default=[1, 50])
  parser.add_argument("--checks", nargs="+", default=["auto"],
                      choices=["auto", "step", "call"])
  args = parser.parse_args()
  data = gan_eval.mixture("ring", 20_000).samples
  contenders, baseline = [], {}
  for name in args.configs:
    config = CONFIGS[name]
    for k in args.ks:
      # Generator steps: a whole number of calls, at least 4 of them.
      steps = max(args.steps // config["n_critic"] // k, 4) * k
      hand = f"hand-written {name} K={k}"
      contenders.append((hand, lambda c=config, s=steps, k=k: handwritten(
          data, c, s, k, args.hidden)))
      for check in args.checks:
        label = f"GAN ({check}) {name} K={k}"
        baseline[label] = hand
        contenders.append((label, lambda c=config, s=steps, k=k, x=check:
                           scenario(data, c, s, k, args.hidden, x)))
  results = {name: [] for name, _ in contenders}
  for r in range(args.rounds):
    order = contenders if r % 2 == 0 else contenders[::-1]
    for name, run in order:
      results[name].append(run())
    print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
  speed = {n: statistics.median(s for _, s in v) for n, v in results.items()}
  setup = {n: statistics.median(t for t, _ in v) for n, v in results.items()}
  print(f"MLPs with two hidden layers of {args.hidden}, batch {BATCH}; "
        f"medians of {args.rounds} rounds; (check) = nonfinite_check")
  print(f"{'':38s} {'steps/s':>9s} {'trace+1st call':>15s} "
        f"{'vs hand-written':>16s}")
  for name in results:
    base = speed[baseline.get(name, name)]
    print(f"{name:38s} {speed[name]:9.2f} {setup[name]:14.2f}s "
          f"{speed[name] / base:15.2f}x")


if __name__ == "__main__":
  main()
