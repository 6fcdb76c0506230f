"""GAN evaluation: mixtures, mode coverage, classifier score, PNG grids and
the evaluators."""

import numpy as np
import pytest

from sonnet_like.scenarios.gan import evaluation as gan_eval


def test_ring_and_grid_modes():
  ring = gan_eval.ring_modes()
  np.testing.assert_allclose(np.linalg.norm(ring, axis=1), 2.0, rtol=1e-6)
  angles = np.arctan2(ring[:, 1], ring[:, 0]) % (2 * np.pi)
  np.testing.assert_allclose(angles, 2 * np.pi * np.arange(8) / 8, atol=1e-6)
  grid = gan_eval.grid_modes()
  assert grid.shape == (25, 2)
  assert sorted(set(grid[:, 0].tolist())) == [-4.0, -2.0, 0.0, 2.0, 4.0]
  assert len({tuple(p) for p in grid.tolist()}) == 25


@pytest.mark.parametrize("kind,count,std", [("ring", 8, 0.02),
                                            ("grid", 25, 0.05)])
def test_mixture_samples_every_mode_with_its_std(kind, count, std):
  mixture = gan_eval.mixture(kind, 20_000, seed=1)
  assert mixture.samples.shape == (20_000, 2)
  assert mixture.samples.dtype == np.float32
  assert mixture.std == std and len(mixture.modes) == count
  nearest = np.linalg.norm(mixture.samples[:, None] - mixture.modes[None],
                           axis=-1).argmin(1)
  assert np.bincount(nearest, minlength=count).min() > 20_000 / count * 0.8
  offsets = mixture.samples - mixture.modes[nearest]
  np.testing.assert_allclose(offsets.std(axis=0), std, rtol=0.05)
  with pytest.raises(ValueError, match=r"mixture: kind must be one of "
                     r"\['ring', 'grid'\], got 'spiral'"):
    gan_eval.mixture("spiral", 10)


def test_mode_coverage_counts_modes_of_high_quality_samples_only():
  modes = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
  samples = np.array([
      [0.0, 0.3],    # Mode 0, exactly 3 std away: high quality.
      [0.1, -0.1],   # Mode 0.
      [10.5, 0.0],   # Nearest mode 1 but 5 std away: low quality.
      [5.0, 5.0],    # Between modes: low quality.
  ])
  got = gan_eval.mode_coverage(samples, modes, std=0.1)
  assert got == {"modes": 1.0, "high_quality": 50.0}
  got = gan_eval.mode_coverage(samples, modes, std=0.1, threshold=6.0)
  assert got == {"modes": 2.0, "high_quality": 75.0}
  with pytest.raises(ValueError, match="mode_coverage: samples"):
    gan_eval.mode_coverage(np.zeros((3, 3)), modes, 0.1)


def test_a_collapsed_generator_captures_one_mode():
  ring = gan_eval.mixture("ring", 2_500)
  collapsed = ring.modes[3] + np.random.default_rng(0).normal(
      0, 0.01, (2_500, 2))
  assert gan_eval.mode_coverage(collapsed, ring.modes, ring.std) == {
      "modes": 1.0, "high_quality": 100.0}


def test_classifier_score():
  eye = np.eye(10) * 20.0
  even = np.concatenate([eye] * 3)  # Every class 3 times, confidently.
  got = gan_eval.classifier_score(even)
  assert got == pytest.approx({"confident": 100.0, "class_evenness": 1.0,
                               "classes": 10.0})
  unsure = np.zeros((10, 10))  # Uniform probabilities: never confident.
  got = gan_eval.classifier_score(np.concatenate([eye[:2], unsure]))
  assert got["confident"] == pytest.approx(100 * 2 / 12)
  assert got["classes"] == 2.0
  assert got["class_evenness"] == pytest.approx(np.log(2) / np.log(10))
  one_class = np.tile(eye[4], (5, 1))
  assert gan_eval.classifier_score(one_class)["class_evenness"] == 0.0


def test_png_grid_round_trips(tmp_path):
  from matplotlib import image  # pylint: disable=g-import-not-at-top
  images = np.zeros((3, 2, 2, 1))
  images[0, 0, 0] = 1.0
  images[2] = 0.5
  path = gan_eval.write_png_grid(str(tmp_path / "sub" / "grid.png"), images,
                                 columns=2, scale=3, padding=1)
  pixels = image.imread(path)
  # 2 rows x 2 columns of 6x6 cells (+1 padding each, +1 outer).
  assert pixels.shape == (2 * 7 + 1, 2 * 7 + 1)
  np.testing.assert_allclose(pixels[1:4, 1:4], 1.0)
  np.testing.assert_allclose(pixels[4:7, 1:7], 0.0)
  np.testing.assert_allclose(pixels[8:14, 1:7], 128 / 255, atol=1e-6)
  np.testing.assert_allclose(pixels[8:14, 8:14], 128 / 255)  # Empty cell.
  with pytest.raises(ValueError, match=r"write_png_grid: images must be"):
    gan_eval.write_png_grid(str(tmp_path / "x.png"), np.zeros((2, 3, 3, 3)))


class _FakeGAN:
  is_chief, step = True, 7

  def __init__(self, samples):
    self.samples, self.seeds = samples, []

  def sample(self, num_samples, seed=0):
    self.seeds.append(seed)
    return self.samples[:num_samples]


def test_evaluators(tmp_path):
  ring = gan_eval.mixture("ring", 3_000)
  gan = _FakeGAN(ring.samples)
  coverage = gan_eval.ModeCoverage(ring.modes, ring.std, seed=5,
                                   prefix="ring_")
  got = coverage(gan)
  assert got["ring_modes"] == 8.0 and got["ring_high_quality"] > 98.0
  assert gan.seeds == [5]

  grid = gan_eval.SampleGrid(str(tmp_path), num_samples=4, columns=2,
                             shape=(1, 2))
  assert grid(gan) == {}
  assert grid.last_path.endswith("samples_7.png")
  assert (tmp_path / "samples_7.png").exists()

  digits = _FakeGAN(np.eye(10, dtype=np.float32))
  score = gan_eval.ClassifierScore(lambda x: x * 30.0, num_samples=10)
  assert score(digits) == pytest.approx(
      {"confident": 100.0, "class_evenness": 1.0, "classes": 10.0})
