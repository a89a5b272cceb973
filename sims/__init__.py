"""Simulation harness: noise models and circuits, tasks, sampling, sweep executors,
the sinter-format stats store, statistics (fits, thresholds) and plots."""
