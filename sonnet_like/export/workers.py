"""Exporting from every worker of a run while only the chief writes.

Reading distributed variables to save them may involve collectives, so
every worker of a multi-worker run must take part in an export; only the
chief's copy is kept.
"""

import os
import shutil
import tempfile
from typing import Callable

from sonnet_like.core import files


def has_saved_model(directory: str) -> bool:
  """Whether `directory` (on any file system) holds a SavedModel."""
  return files.exists(files.join(directory, "saved_model.pb"))


def save_on_chief(save: Callable[[str], str], directory: str,
                  is_chief: bool) -> str | None:
  """`save(directory)` on the chief (its path); elsewhere into scratch.

  A worker other than the chief saves into a scratch folder that is
  deleted afterwards, and gets None.
  """
  if is_chief:
    return save(directory)
  scratch = tempfile.mkdtemp(prefix="export-scratch-")
  try:
    save(os.path.join(scratch, "export"))
  finally:
    shutil.rmtree(scratch, ignore_errors=True)
  return None
