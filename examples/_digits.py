"""scikit-learn's digits (1,797 real 8x8 images, bundled: no download)."""

import numpy as np


def load(test_fraction: float = 0.2, seed: int = 0, flat: bool = False):
  """Returns `(x_train, y_train), (x_test, y_test)`.

  Images are float32 in [0, 1], shaped `[N, 8, 8, 1]` (or `[N, 64]` with
  `flat=True`); labels are int32 in 0..9. The split is stratified and fixed
  by `seed`.
  """
  from sklearn import datasets  # pylint: disable=g-import-not-at-top
  from sklearn import model_selection  # pylint: disable=g-import-not-at-top
  digits = datasets.load_digits()
  x = (digits.images / 16.0).astype(np.float32)
  x = x.reshape(len(x), 64) if flat else x[..., np.newaxis]
  y = digits.target.astype(np.int32)
  x_train, x_test, y_train, y_test = model_selection.train_test_split(
      x, y, test_size=test_fraction, random_state=seed, stratify=y)
  return (x_train, y_train), (x_test, y_test)
