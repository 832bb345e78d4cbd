"""Running an experiment: the runner (plan -> host -> store), adaptive
stopping and A/A calibration."""
