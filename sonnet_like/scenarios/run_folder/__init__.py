"""The run folder: checkpoints and background saves, the lock and lease, history, saved settings, the best checkpoint, cluster signals."""
