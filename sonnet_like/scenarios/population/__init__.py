"""Populations: many members (seeds, settings) trained in one compiled call.

`members.py` builds each member's modules and optimizer slots from its own
seed and keeps every value stacked on a leading member axis; `step.py` runs
the scenario's own step for every member at once (`tf.vectorized_map`);
`settings.py` says who the members are.
"""
