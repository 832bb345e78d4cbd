"""Kernels as variants: cells run in QEMU guests.

qemu.py probes what this machine's QEMU can do and writes one boot's
command line; host.py boots one kernel and ships cells in and samples out;
variants.py runs every variant in the VM of its kernel; guest.py is the
guest side (``python -m iolab.hosts.vm.guest``), which imports only the
cell executor. The kernels themselves come ready from iolab.kernels.
Kept empty so the guest loads nothing it does not use.
"""
