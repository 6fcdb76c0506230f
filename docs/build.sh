#!/usr/bin/env bash
# Builds the documentation strictly (every warning is an error) into
# docs/_build/html. Needs `pip install -e ".[docs]"`.
set -euo pipefail
cd "$(dirname "$0")"
python -m sphinx -W --keep-going -b html . _build/html "$@"
