"""Reinforcement-learning scenarios and their shared parts."""
