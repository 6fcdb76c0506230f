"""What a run shows: logs, TensorBoard, the progress bar, learning curves and profiling."""
