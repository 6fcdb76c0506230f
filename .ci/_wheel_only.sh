#!/usr/bin/env bash
# CI: (1) build the sdist and wheel, install the wheel with no extras into a
# fresh virtual environment and smoke-test it from outside the source tree,
# as a user who pip-installs sonnet_like gets it; (2) the README's test
# command (the developer install and the whole suite), word for word, last.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== wheel: build, inspect, install without extras, smoke test =="
work="$(mktemp -d)"
python3 -m venv "$work/builder" && "$work/builder/bin/pip" install -q build
"$work/builder/bin/python" -m build -q --sdist --wheel --outdir "$work/dist" . > /dev/null
"$work/builder/bin/python" .ci/check_wheel.py "$work"/dist/sonnet_like-*.whl
python3 -m venv "$work/user"
"$work/user/bin/pip" install -q "$work"/dist/sonnet_like-*.whl
mkdir "$work/elsewhere" && cp .ci/smoke_installed.py "$work/elsewhere/"
(cd "$work/elsewhere" && "$work/user/bin/python" smoke_installed.py)
rm -rf "$work"

