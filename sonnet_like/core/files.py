"""Files on any file system TensorFlow reaches: local, `file://`, `ram://`, `gs://`.

Every file of a run goes through these functions (`tf.io.gfile` underneath),
so a `save_dir` on cloud storage works like a local folder and nothing is
ever created in a local folder named after a scheme (`ram:/runs/a`). A local
folder keeps what only it offers: `fsync`, an atomic rename of files and
folders, and `flock` (`scenarios/run_folder/run_dir.py`). `s3://` needs the
`tensorflow-io` package, which registers it with TensorFlow.

    >>> write_atomic("ram://files_doctest/a.txt", "hello")
    >>> read_text("ram://files_doctest/a.txt"), listdir("ram://files_doctest")
    ('hello', ['a.txt'])
"""

import os
import posixpath
import shutil
import socket

import tensorflow as tf

_gfile = tf.io.gfile

NO_FILE_SYSTEM_ERROR = (
    "{owner}: {argument} {path}: TensorFlow has no file system for "
    "'{scheme}://' here.{hint}")

S3_HINT = (" s3:// comes with the tensorflow-io package: pip install "
           "tensorflow-io (or sonnet_like[s3]).")


class NoFileSystemError(ValueError):
  """A path whose scheme no installed TensorFlow file system serves."""


def normalized(path: str | os.PathLike) -> str:
  """`path` as a string; a `file://` URL becomes the local path it names."""
  path = os.fspath(path)
  if path.startswith("file://"):
    return path[len("file://"):]
  return path


def scheme(path: str) -> str:
  """`"gs"` for `gs://b/x`, `""` for a local path."""
  head, found, _ = normalized(path).partition("://")
  return head if found else ""


def is_local(path: str) -> bool:
  return not scheme(path)


def join(path: str, *names: str) -> str:
  path = normalized(path)
  if is_local(path):
    return os.path.join(path, *names)
  return posixpath.join(path, *names)


def parent(path: str) -> str:
  """The folder that holds `path` (absolute, for a local path)."""
  path = normalized(path)
  if is_local(path):
    return os.path.dirname(os.path.abspath(path))
  return posixpath.dirname(path.rstrip("/"))


def check_scheme(owner: str, argument: str, path: str) -> None:
  """Raises `NoFileSystemError` naming `owner` if `path`'s scheme is unknown.

  Where TensorFlow lacks `s3://`, it imports `tensorflow_io`, which
  registers it, and asks again.
  """
  found = scheme(path)
  if not found:
    return
  try:
    _gfile.exists(path)
    return
  except tf.errors.UnimplementedError:
    pass
  hint = ""
  if found == "s3":
    try:
      import tensorflow_io  # pylint: disable=g-import-not-at-top,unused-import
      _gfile.exists(path)
      return
    except ImportError:
      hint = S3_HINT
    except tf.errors.UnimplementedError:
      pass
  raise NoFileSystemError(NO_FILE_SYSTEM_ERROR.format(
      owner=owner, argument=argument, path=path, scheme=found, hint=hint))


# Local paths go through `os`, exactly as before (its errors are OSErrors
# with an errno); other schemes through `tf.io.gfile`.


def exists(path: str) -> bool:
  path = normalized(path)
  return os.path.exists(path) if is_local(path) else _gfile.exists(path)


def isdir(path: str) -> bool:
  path = normalized(path)
  return os.path.isdir(path) if is_local(path) else _gfile.isdir(path)


def makedirs(path: str) -> None:
  path = normalized(path)
  if is_local(path):
    os.makedirs(path, exist_ok=True)
  else:
    _gfile.makedirs(path)


def listdir(path: str) -> list[str]:
  path = normalized(path)
  names = os.listdir(path) if is_local(path) else _gfile.listdir(path)
  return sorted(name.rstrip("/") for name in names)


def remove(path: str) -> None:
  path = normalized(path)
  if is_local(path):
    os.remove(path)
  else:
    _gfile.remove(path)


def read_text(path: str) -> str:
  path = normalized(path)
  if is_local(path):
    with open(path) as f:
      return f.read()
  with _gfile.GFile(path, "r") as f:
    return f.read()


def write_bytes(path: str, data: bytes) -> None:
  path = normalized(path)
  if is_local(path):
    with open(path, "wb") as f:
      f.write(data)
  else:
    with _gfile.GFile(path, "wb") as f:
      f.write(data)


def mtime(path: str) -> float:
  """Modification time in seconds (0.0 where the file system keeps none)."""
  path = normalized(path)
  if is_local(path):
    return os.path.getmtime(path)
  return _gfile.stat(path).mtime_nsec / 1e9


def write_atomic(path: str, text: str) -> None:
  """Writes `text` to `path` whole or not at all: a reader never sees half.

  Written to a temporary file beside it, then renamed over it (locally with
  `fsync` of the file and its folder first). On an object store the object
  appears whole when the rename's copy completes.
  """
  path = normalized(path)
  temp = f"{path}.tmp-{socket.gethostname()}-{os.getpid()}"
  try:
    if is_local(path):
      with open(temp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
      os.replace(temp, path)
      sync_folder(os.path.dirname(path) or ".")
    else:
      with _gfile.GFile(temp, "w") as f:
        f.write(text)
      _gfile.rename(temp, path, overwrite=True)
  except BaseException:
    if exists(temp):
      remove(temp)
    raise


def sync_folder(path: str) -> None:
  """`fsync`s a local folder, so a rename in it survives a crash."""
  if not is_local(path):
    return
  try:
    fd = os.open(path, os.O_RDONLY)
  except OSError:
    return
  try:
    os.fsync(fd)
  except OSError:  # Not every file system syncs folders.
    pass
  finally:
    os.close(fd)


def move(source: str, target: str) -> None:
  """Moves a file or a folder (with everything in it) to `target`.

  Creates `target`'s folder if needed. Locally one atomic rename. Object
  stores (and `ram://`) rename objects, not folders: each file is renamed
  under the new prefix.
  """
  source, target = normalized(source), normalized(target)
  makedirs(parent(target))
  if is_local(source):
    os.replace(source, target)
    return
  if not _gfile.isdir(source):
    _gfile.rename(source, target, overwrite=False)
    return
  for folder, _, names in list(_gfile.walk(source)):
    relative = folder[len(source):].strip("/")
    destination = posixpath.join(target, relative) if relative else target
    _gfile.makedirs(destination)
    for name in names:
      _gfile.rename(posixpath.join(folder, name),
                    posixpath.join(destination, name), overwrite=False)
  rmtree(source)


def rmtree(path: str) -> None:
  """Deletes a folder and everything in it; quietly does nothing if absent."""
  path = normalized(path)
  if is_local(path):
    shutil.rmtree(path, ignore_errors=True)
    return
  if not _gfile.exists(path):
    return
  # Files first, then folders deepest first: some file systems (ram://) do
  # not delete what a folder holds along with it.
  folders = []
  for folder, _, names in list(_gfile.walk(path)):
    folders.append(folder)
    for name in names:
      _gfile.remove(posixpath.join(folder, name))
  for folder in sorted(folders, key=len, reverse=True):
    try:
      _gfile.rmtree(folder)
    except tf.errors.NotFoundError:
      pass
