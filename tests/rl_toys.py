"""Tiny in-graph environments for the RL tests (learnable in seconds)."""

from sonnet_like import envs

# The sign-guessing game now ships with the library (docstrings use it).
Guess = envs.Guess
