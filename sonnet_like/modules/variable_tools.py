"""format_variables and log_variables: a table of variables for humans."""

from typing import Iterable

from absl import logging
import tensorflow as tf

_SHORT_DTYPES = {
    tf.float16: "f16", tf.float32: "f32", tf.float64: "f64",
    tf.bfloat16: "bf16", tf.complex64: "c64", tf.complex128: "c128",
    tf.uint8: "u8", tf.uint16: "u16", tf.uint32: "u32", tf.uint64: "u64",
    tf.int8: "i8", tf.int16: "i16", tf.int32: "i32", tf.int64: "i64",
    tf.qint8: "qi8", tf.qint16: "qi16", tf.qint32: "qi32", tf.quint8: "qu8",
    tf.quint16: "qu16",
}
_HEADERS = ("Variable", "Spec", "Trainable", "Device")


def _spec(variable: tf.Variable) -> str:
  """`f32[784,10]`: short dtype and shape."""
  dtype = _SHORT_DTYPES.get(variable.dtype, variable.dtype.name)
  return f"{dtype}[{','.join(str(d) for d in variable.shape)}]"


def _device(variable: tf.Variable) -> str:
  """`CPU`, `GPU 1`; the full device string off the local worker."""
  spec = tf.DeviceSpec.from_string(variable.device)
  if spec.job == "localhost" and spec.replica == 0 and spec.task == 0:
    if spec.device_index == 0:
      return spec.device_type
    return f"{spec.device_type} {spec.device_index}"
  return spec.to_string()


def _order(variable: tf.Variable) -> tuple:
  """Grouped by name scope; within a scope, higher rank first."""
  scope = variable.name.rpartition("/")[0]
  return scope, -len(variable.shape), variable.name


def _org_table(rows: list[tuple[str, ...]]) -> str:
  """An Emacs org-mode table, laid out as `tabulate(tablefmt="orgtbl")`."""
  widths = [max([len(h) + 2] + [len(r[i]) for r in rows])
            for i, h in enumerate(_HEADERS)]
  line = lambda cells: "| " + " | ".join(
      c.ljust(w) for c, w in zip(cells, widths)) + " |"
  rule = "|" + "+".join("-" * (w + 2) for w in widths) + "|"
  return "\n".join([line(_HEADERS), rule] + [line(r) for r in rows])


def format_variables(variables: Iterable[tf.Variable],
                     tablefmt: str = "orgtbl") -> str:
  """A table of the variables' names, dtypes and shapes, and devices.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> layer = snt.Linear(3, name="layer")
      >>> _ = layer(tf.ones([1, 2]))
      >>> print(snt.format_variables(layer.variables))
      | Variable   | Spec     | Trainable   | Device   |
      |------------+----------+-------------+----------|
      | layer/w    | f32[2,3] | True        | CPU      |
      | layer/b    | f32[3]   | True        | CPU      |

  Args:
    variables: The variables, e.g. `module.variables`.
    tablefmt: "orgtbl" (built in); any other format of the `tabulate`
      package if it is installed.

  Returns:
    The table, one line per variable, sorted by name scope and then by
    decreasing rank.
  """
  rows = [(v.name.split(":")[0], _spec(v), str(v.trainable), _device(v))
          for v in sorted(variables, key=_order)]
  if tablefmt == "orgtbl":
    return _org_table(rows)
  try:
    import tabulate  # pylint: disable=g-import-not-at-top
  except ImportError as error:
    raise ValueError(f"format_variables: tablefmt {tablefmt!r} needs the "
                     "tabulate package (pip install tabulate); only 'orgtbl' "
                     "is built in.") from error
  return tabulate.tabulate(rows, headers=_HEADERS, tablefmt=tablefmt)


def log_variables(variables: Iterable[tf.Variable]) -> None:
  """Logs `format_variables(variables)` line by line at INFO level (absl)."""
  for line in format_variables(variables).split("\n"):
    logging.info(line)
