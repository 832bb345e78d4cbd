"""Kernels as variants: cells run in QEMU guests.

host.py boots guests and ships cells in and samples out; kernels.py fetches
and prepares kernels; initramfs.py builds the guest's init; guest.py is the
guest side (``python -m iolab.hosts.vm.guest``), which imports only the
cell executor. Kept empty so the guest loads nothing it does not use.
"""
