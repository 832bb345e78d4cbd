"""Where cells run: this machine, or VMs booted with other kernels.

A host only moves a CellSpec in and a Sample out; the cell executor
(iolab.cell.executor) does the work in both places. The runner sees every
host through `Host`: cells are grouped into batches (a VM boot runs a
batch; on this machine a batch is one cell) and each batch yields its
samples as they come.

    base    Host (the protocol), CellByCell
    local   this machine
    vm/     qemu (what QEMU can do here, a boot's argument list), host (one
            kernel's VM), variants (every variant in its kernel's VM), guest

This file only re-exports (and stays light: the guest imports the package).
"""

from iolab.hosts.base import CellByCell, Host

__all__ = ["CellByCell", "Host"]
