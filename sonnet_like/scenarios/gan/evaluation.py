"""Evaluating GANs: mode coverage on 2-D mixtures, sample grids, a
classifier-based score, and evaluators that a `GAN` runs at eval boundaries.

Mode coverage follows VEEGAN (Srivastava et al. 2017) and PacGAN (Lin et al.
2018): draw 2,500 samples; a sample is high quality when it lies within 3
standard deviations of its nearest mode; a mode is captured when it is the
nearest mode of at least one high-quality sample. Real data itself scores
about 98.9% high quality in 2-D (`1 - exp(-4.5)`).

    >>> import numpy as np
    >>> from sonnet_like.scenarios.gan import evaluation
    >>> ring = evaluation.mixture("ring", 2_500, seed=0)
    >>> evaluation.mode_coverage(ring.samples, ring.modes, ring.std)
    {'modes': 8.0, 'high_quality': 99.2}
"""

import struct
import zlib
from typing import Any, Callable, NamedTuple

import numpy as np
import tensorflow as tf

from sonnet_like.core import files

MIXTURES = ("ring", "grid")


class Mixture(NamedTuple):
  """Samples of a mixture of Gaussians, its modes and their common std."""
  samples: np.ndarray
  modes: np.ndarray
  std: float


def ring_modes(num_modes: int = 8, radius: float = 2.0) -> np.ndarray:
  """Modes at angles `2 pi k / num_modes` on a circle, `[num_modes, 2]`."""
  angles = 2 * np.pi * np.arange(num_modes) / num_modes
  return (radius * np.stack([np.cos(angles), np.sin(angles)], 1)).astype(
      np.float32)


def grid_modes(side: int = 5, spacing: float = 2.0) -> np.ndarray:
  """A `side x side` grid centred at 0, `[side**2, 2]` (-4..4 by default)."""
  axis = (np.arange(side) - (side - 1) / 2) * spacing
  xs, ys = np.meshgrid(axis, axis, indexing="ij")
  return np.stack([xs.ravel(), ys.ravel()], 1).astype(np.float32)


def mixture(kind: str, num_samples: int, seed: int = 0) -> Mixture:
  """Samples of the ring of 8 (radius 2, std 0.02) or the grid of 25
  (spacing 2, std 0.05) Gaussians, modes drawn with equal probability."""
  if kind == "ring":
    modes, std = ring_modes(), 0.02
  elif kind == "grid":
    modes, std = grid_modes(), 0.05
  else:
    raise ValueError(f"mixture: kind must be one of {list(MIXTURES)}, got "
                     f"{kind!r}.")
  rng = np.random.default_rng(seed)
  which = rng.integers(len(modes), size=num_samples)
  samples = modes[which] + rng.normal(0.0, std, size=(num_samples, 2))
  return Mixture(samples.astype(np.float32), modes, std)


def mode_coverage(samples: Any, modes: Any, std: float,
                  threshold: float = 3.0) -> dict[str, float]:
  """Modes captured and the percent of high-quality samples.

  Args:
    samples: `[N, D]` samples.
    modes: `[M, D]` mode centres.
    std: The modes' standard deviation.
    threshold: A sample is high quality within `threshold * std` of its
      nearest mode.

  Returns:
    `{"modes": captured modes, "high_quality": percent of samples}`.
  """
  samples, modes = np.asarray(samples, np.float64), np.asarray(modes)
  if samples.ndim != 2 or modes.ndim != 2 or samples.shape[1] != modes.shape[1]:
    raise ValueError(f"mode_coverage: samples [N, D] and modes [M, D] must "
                     f"agree in D, got {samples.shape} and {modes.shape}.")
  distances = np.linalg.norm(samples[:, None, :] - modes[None, :, :], axis=-1)
  nearest = distances.argmin(axis=1)
  good = distances[np.arange(len(samples)), nearest] <= threshold * std
  return {"modes": float(len(np.unique(nearest[good]))),
          "high_quality": float(100.0 * good.mean()) if len(good) else 0.0}


def classifier_score(logits: Any, num_classes: int | None = None,
                     confidence: float = 0.9) -> dict[str, float]:
  """How often a classifier is confident on samples, and how even its classes.

  Args:
    logits: `[N, classes]` classifier logits for generated samples.
    num_classes: Number of classes (default: the logits' last dimension).
    confidence: A prediction is confident when its top probability is at
      least this.

  Returns:
    "confident": percent of samples predicted with confidence;
    "class_evenness": entropy of the histogram of confident predictions over
    log(classes) (1 when every class comes out equally often);
    "classes": classes predicted confidently at least once.
  """
  logits = np.asarray(logits, np.float64)
  num_classes = num_classes or logits.shape[-1]
  shifted = logits - logits.max(axis=1, keepdims=True)
  probs = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
  sure = probs.max(axis=1) >= confidence
  counts = np.bincount(probs.argmax(axis=1)[sure], minlength=num_classes)
  share = counts / max(counts.sum(), 1)
  entropy = -np.sum(share[share > 0] * np.log(share[share > 0]))
  return {"confident": float(100.0 * sure.mean()),
          "class_evenness": float(entropy / np.log(num_classes)),
          "classes": float(np.count_nonzero(counts))}


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
  return (struct.pack(">I", len(payload)) + kind + payload +
          struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))


def write_png_grid(path: str, images: Any, columns: int = 10,
                   scale: int = 4, value_range: tuple[float, float] = (0, 1),
                   padding: int = 1) -> str:
  """Writes grey images `[N, H, W]` or `[N, H, W, 1]` as one PNG grid.

  Values are clipped to `value_range` and mapped to 0..255; each pixel
  becomes a `scale x scale` block. Returns `path`.
  """
  images = np.asarray(images, np.float64)
  if images.ndim == 4 and images.shape[-1] == 1:
    images = images[..., 0]
  if images.ndim != 3:
    raise ValueError(f"write_png_grid: images must be [N, H, W] or "
                     f"[N, H, W, 1], got shape {images.shape}.")
  low, high = value_range
  images = np.clip((images - low) / (high - low), 0.0, 1.0)
  count, height, width = images.shape
  rows = -(-count // columns)
  cell_h, cell_w = height * scale + padding, width * scale + padding
  canvas = np.full((rows * cell_h + padding, columns * cell_w + padding), 0.5)
  for i, image in enumerate(images):
    r, c = divmod(i, columns)
    big = np.kron(image, np.ones((scale, scale)))
    canvas[padding + r * cell_h:padding + r * cell_h + height * scale,
           padding + c * cell_w:padding + c * cell_w + width * scale] = big
  pixels = (canvas * 255).round().astype(np.uint8)
  raw = b"".join(b"\x00" + row.tobytes() for row in pixels)
  header = struct.pack(">IIBBBBB", pixels.shape[1], pixels.shape[0], 8, 0, 0,
                       0, 0)
  files.makedirs(files.parent(path))
  files.write_bytes(path, b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) +
                    _png_chunk(b"IDAT", zlib.compress(raw, 9)) +
                    _png_chunk(b"IEND", b""))
  return path


# ---- Evaluators: callables `evaluator(gan) -> {name: value}`. ----


class ModeCoverage:
  """Reports "modes" and "high_quality" (see `mode_coverage`) of samples.

  Args:
    modes: `[M, 2]` mode centres.
    std: Their standard deviation.
    num_samples: Samples drawn per evaluation (2,500 as in VEEGAN/PacGAN).
    seed: Seed of the latent codes (the same codes at every evaluation).
    prefix: Put before the metric names.
  """

  def __init__(self, modes: Any, std: float, num_samples: int = 2_500,
               seed: int = 0, prefix: str = ""):
    self.modes, self.std = np.asarray(modes), float(std)
    self.num_samples, self.seed, self.prefix = num_samples, seed, prefix

  def __call__(self, gan: Any) -> dict[str, float]:
    samples = gan.sample(self.num_samples, seed=self.seed)
    return {f"{self.prefix}{k}": v for k, v in
            mode_coverage(samples, self.modes, self.std).items()}


class SampleGrid:
  """Writes a PNG grid of samples at every evaluation.

  Args:
    directory: Folder of the PNGs, named `samples_<step>.png`.
    num_samples: Images in the grid.
    columns: Images per row.
    seed: Seed of the latent codes (the same codes at every evaluation, so
      the grids show how the same samples evolve).
    shape: Reshape each sample to this `[H, W]` first (e.g. (8, 8)).
    scale, value_range: As in `write_png_grid`.
  """

  def __init__(self, directory: str, num_samples: int = 100,
               columns: int = 10, seed: int = 0,
               shape: tuple[int, int] | None = None, scale: int = 4,
               value_range: tuple[float, float] = (0.0, 1.0)):
    self.directory, self.num_samples, self.columns = (directory, num_samples,
                                                      columns)
    self.seed, self.shape, self.scale = seed, shape, scale
    self.value_range = value_range
    self.last_path: str | None = None

  def __call__(self, gan: Any) -> dict[str, float]:
    samples = gan.sample(self.num_samples, seed=self.seed)
    if self.shape is not None:
      samples = samples.reshape((len(samples),) + tuple(self.shape))
    if gan.is_chief:
      self.last_path = write_png_grid(
          files.join(self.directory, f"samples_{gan.step}.png"), samples,
          self.columns, self.scale, self.value_range)
    return {}


class ClassifierScore:
  """Reports `classifier_score` of a trained classifier on samples.

  Args:
    classifier: Maps a batch of samples to class logits.
    num_samples: Samples drawn per evaluation.
    seed: Seed of the latent codes.
    confidence: See `classifier_score`.
  """

  def __init__(self, classifier: Callable[[tf.Tensor], tf.Tensor],
               num_samples: int = 1_000, seed: int = 0,
               confidence: float = 0.9):
    self.classifier, self.num_samples = classifier, num_samples
    self.seed, self.confidence = seed, confidence

  def __call__(self, gan: Any) -> dict[str, float]:
    samples = gan.sample(self.num_samples, seed=self.seed)
    logits = self.classifier(tf.convert_to_tensor(samples))
    return classifier_score(logits, confidence=self.confidence)
