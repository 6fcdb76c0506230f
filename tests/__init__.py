"""The test suite; its folders mirror the package's (tests/scenarios/rl/test_ppo.py
tests sonnet_like/scenarios/rl/ppo.py), cross-cutting tests sit here."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # The repository.
