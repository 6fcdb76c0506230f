"""Sphinx configuration of the sonnet_like documentation.

Build it with `docs/build.sh` (strict: every warning is an error).
"""

import os
import pathlib
import sys

_DOCS = pathlib.Path(__file__).parent
sys.path.insert(0, str(_DOCS.parent))  # This checkout's sonnet_like.
sys.path.insert(0, str(_DOCS / "_ext"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import sonnet_like  # pylint: disable=g-import-not-at-top,wrong-import-position

project = "sonnet_like"
author = "the sonnet_like authors"
copyright = "the sonnet_like authors"  # pylint: disable=redefined-builtin
release = version = sonnet_like.__sonnet_like_version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "myst_parser",
    "public_api",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_ext", "build.sh"]
root_doc = "index"

# Docstrings write code as `name` (Markdown style): show it as code.
default_role = "code"

napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# "Attributes:" sections as fields: a NamedTuple's fields are already
# documented as members, and two descriptions of one name is a warning.
napoleon_use_ivar = True

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_class_signature = "mixed"
autodoc_inherit_docstrings = True

myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

# A broken cross-reference is a warning, and the build treats warnings as
# errors. Types from other libraries have no page here (no network at build
# time for intersphinx), so references to them are not checked.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(tf|tensorflow|np|numpy|keras|tfp|gymnasium|typing|"
     r"collections|abc|types|os|pathlib|enum|dataclasses|contextlib)(\..*)?"),
    (r"py:.*", r"(int|float|str|bool|bytes|dict|list|tuple|set|object|None|"
     r"Any|Callable|Sequence|Mapping|Iterable|Iterator|Optional|Union|"
     r"NoneType|type|ellipsis|EllipsisType)"),
    # Type variables in signatures (`T` in `def f(x: T) -> T`).
    (r"py:class", r"sonnet_like\..*\.T"),
    # Return types that Sonnet 2 does not export either: their fields are
    # described where they are returned (snt.functional.transform, ...).
    (r"py:class", r"sonnet_like\.functional\.(transform\.Transformed|"
     r"transform\.TransformedWithState|optimizers\.TransformedOptimizer)"),
    # Errors raised by snt.scenarios.Checkpointer and History that are not
    # exported (catch them as ValueError / RuntimeError, their bases).
    (r"py:exc", r"(history\.)?(NoReadableCheckpointError|"
     r"CheckpointMismatchError|HistoryFileError)"),
]

html_theme = "furo"
html_title = f"sonnet_like {release}"
