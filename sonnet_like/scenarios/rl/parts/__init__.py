"""What the RL scenarios share: environments and rollouts, episode statistics,
returns, policies, observation normalisation and the replay buffer."""
