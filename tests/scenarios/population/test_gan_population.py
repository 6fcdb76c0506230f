"""A population of GANs: each member draws its own noise (its scenario's
generator, in `next_inputs`) and equals the solo run with its seed."""

import numpy as np

import sonnet_like as snt

TOLERANCE = 1e-5


def _data():
  rng = np.random.default_rng(0)
  modes = np.array([[-1.0, 0.0], [1.0, 0.0]], np.float32)
  return (modes[rng.integers(2, size=128)] +
          rng.normal(0, 0.1, (128, 2))).astype(np.float32)


def _gan(**settings):
  gan = snt.scenarios.GAN(num_steps=12, batch_size=16, latent_size=2,
                          n_critic=2, progress=False, tensorboard=False,
                          **settings)
  generator = snt.nets.MLP([8, 2], name="generator")
  discriminator = snt.nets.MLP([8, 1], name="discriminator")
  gan(generator, discriminator, snt.optimizers.Adam(0.01, beta1=0.5),
      snt.optimizers.Adam(0.01, beta1=0.5), _data())
  return gan


def test_each_gan_member_is_the_solo_run_of_its_seed():
  population = _gan(population=[0, 1, 2])
  for i in range(3):
    solo = _gan(seed=i)
    member = population.member(i)
    for name in ("generator", "discriminator"):
      for a, b in zip(member[name].variables,
                      solo.models()[name].variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=TOLERANCE,
                                   err_msg=f"member {i} {name}")
  first = population.member(0)["generator"].variables[0].numpy()
  second = population.member(1)["generator"].variables[0].numpy()
  assert np.max(np.abs(first - second)) > 1e-3
