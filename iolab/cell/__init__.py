"""The cell executor and all a cell needs, on this host and in a VM guest:
targets, knob application, the sample, environment, derived metrics.

Light to import (the guest loads it under emulation): nothing here imports
the store, statistics, reports or the runner.
"""
