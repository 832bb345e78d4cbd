"""Where cells run: this machine, or (later) a VM booted with another kernel.

A host only moves a CellSpec in and a Sample out; the cell executor
(iolab.cell) does the work in both places.
"""
