"""`CSVLogger`: the train logs and eval metrics as two CSV files.

`train.csv` and `eval.csv` hold a `step` column and one column per logged
value, in the order they first appear (a value that appears later widens
the file; earlier rows leave it empty). Each write replaces the file whole
(`files.write_atomic`), so a reader or a killed process never leaves half a
row, and the folder may be local or on cloud storage. A resumed run keeps
the rows up to the restored step and drops the later ones (the killed
process logged steps the resumed run trains again), so each step has one
row and it is the resumed run's.
"""

import csv
import io
from typing import Any

from sonnet_like.core import files
from sonnet_like.scenarios.reporting import logger

NO_FOLDER_ERROR = (
    "CSVLogger needs a folder for its files: pass directory=..., or give "
    "the scenario ({owner}) a save_dir (the files then go to "
    "save_dir/logs).")


class CSVLogger(logger.Logger):
  """Writes train logs to `train.csv` and eval metrics to `eval.csv`.

  Args:
    directory: The files' folder; default `save_dir/logs` of the scenario.
    log_every: Write the train logs every this many steps; default the
      scenario's `log_every`.
  """

  KINDS = ("train", "eval")

  def __init__(self, directory: str | None = None,
               log_every: int | None = None):
    super().__init__(log_every)
    self.directory = directory
    self._folder: str | None = None
    self._tables: dict[str, tuple[list[str], list[dict[str, str]]]] = {}

  def path(self, kind: str) -> str:
    """The file of `kind` ("train" or "eval"), once the run has begun."""
    return files.join(self._folder, f"{kind}.csv")

  def open(self, scenario):
    folder = self.directory
    if folder is None and scenario.save_dir:
      folder = files.join(scenario.save_dir, "logs")
    if folder is None:
      raise ValueError(NO_FOLDER_ERROR.format(owner=type(scenario).__name__))
    files.makedirs(folder)
    self._folder = folder
    for kind in self.KINDS:
      columns, rows = self._read(self.path(kind))
      kept = [row for row in rows if int(row["step"]) <= scenario.step]
      self._tables[kind] = (columns, kept)
      if len(kept) < len(rows):  # Steps the resumed run trains again.
        self._save(kind)

  @staticmethod
  def _read(path: str) -> tuple[list[str], list[dict[str, str]]]:
    if not files.exists(path):
      return ["step"], []
    reader = csv.DictReader(io.StringIO(files.read_text(path)))
    return list(reader.fieldnames or ["step"]), list(reader)

  def _save(self, kind: str) -> None:
    columns, rows = self._tables[kind]
    text = io.StringIO()
    writer = csv.DictWriter(text, columns, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    files.write_atomic(self.path(kind), text.getvalue())

  def write(self, kind, step, values):
    columns, rows = self._tables[kind]
    columns += [name for name in values if name not in columns]
    rows.append({"step": str(step),
                 **{name: repr(float(v)) for name, v in values.items()}})
    self._save(kind)


def read(path: str) -> dict[str, list[float]]:
  """A `CSVLogger` file as columns: `{"step": [...], "loss": [...]}` (an
  empty cell is NaN)."""
  _, rows = CSVLogger._read(path)  # pylint: disable=protected-access
  table: dict[str, list[float]] = {}
  for row in rows:
    for name, value in row.items():
      table.setdefault(name, []).append(float(value) if value else
                                        float("nan"))
  return table
