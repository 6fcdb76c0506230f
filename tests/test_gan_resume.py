"""Exact GAN resume: a run killed (SIGKILL) or preempted (SIGTERM) and started
again ends with the same generator, discriminator, optimizer state and EMA,
bit for bit, as an uninterrupted run."""

import os
import signal
import textwrap

import numpy as np

from tests import test_resume

_SCRIPT = test_resume.SCRIPT_PREAMBLE + textwrap.dedent("""
    rng = np.random.default_rng(0)
    modes = np.array([[-1.0, 0.0], [1.0, 0.0]], np.float32)
    data = modes[rng.integers(2, size=256)] + rng.normal(0, 0.1, (256, 2))
    tf.random.set_seed(0)
    generator = snt.nets.MLP([16, 2], name="generator")
    discriminator = snt.nets.MLP([16, 1], name="discriminator")
    g_opt = keras.optimizers.Adam(0.01, beta_1=0.5)
    d_opt = snt.optimizers.Adam(0.01, beta1=0.5)
    gan = snt.scenarios.GAN(
        num_steps=40, n_critic=3, loss="wasserstein", gradient_penalty=1.0,
        generator_ema=0.9, batch_size=32, latent_size=3, steps_per_call=2,
        save_every=4, eval_every=8, save_dir=save_dir, progress=False,
        hooks=[Slow()])
    gan(generator, discriminator, g_opt, d_opt, data.astype(np.float32),
        evaluators=[snt.scenarios.gan_eval.ModeCoverage(modes, 0.1, 200)])
    values = (list(generator.trainable_variables) +
              list(discriminator.trainable_variables) +
              list(gan.trackables()["generator_ema"].averages) +
              [v for v in g_opt.variables] + list(d_opt.variables))
    np.savez(out, *[np.asarray(v) for v in values])
    print("FINISHED", gan.step, int(g_opt.iterations), int(d_opt.step))
""")


def _root():
  return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_killed_and_preempted_gan_runs_resume_bitwise(tmp_path):
  script = tmp_path / "train.py"
  script.write_text(_SCRIPT.format(root=_root()))
  start = test_resume._start  # pylint: disable=protected-access
  wait = test_resume._wait_for_checkpoint  # pylint: disable=protected-access
  whole = start(script, tmp_path / "whole", tmp_path / "whole.npz", 0.0)
  # 0.5 s per call: several seconds between the checkpoint waited for and
  # the end of the run, for the signal to land even on a loaded machine.
  killed = start(script, tmp_path / "killed", tmp_path / "killed.npz", 0.5)
  termed = start(script, tmp_path / "termed", tmp_path / "termed.npz", 0.5)

  wait(tmp_path / "killed", killed, at_least=12, timeout=300)
  killed.send_signal(signal.SIGKILL)
  killed.communicate()
  wait(tmp_path / "termed", termed, at_least=4, timeout=300)
  termed.send_signal(signal.SIGTERM)
  _, termed_err = termed.communicate(timeout=200)
  assert termed.returncode == 128 + signal.SIGTERM, termed_err[-2000:]
  assert "GAN: caught SIGTERM" in termed_err

  resumed_killed = start(script, tmp_path / "killed", tmp_path / "killed.npz",
                         0.0)
  resumed_termed = start(script, tmp_path / "termed", tmp_path / "termed.npz",
                         0.0)
  for process in (whole, resumed_killed, resumed_termed):
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err[-3000:]
    assert "FINISHED 40 40 120" in out
    assert ("GAN: resuming from" in err) == (process is not whole)

  expected = test_resume._weights(tmp_path / "whole.npz")  # pylint: disable=protected-access
  for name in ("killed", "termed"):
    got = test_resume._weights(tmp_path / f"{name}.npz")  # pylint: disable=protected-access
    # G (4) + D (4) + EMA (4) + both optimizers' state.
    assert len(got) == len(expected) > 12
    for a, b in zip(expected, got):
      np.testing.assert_array_equal(a, b)
