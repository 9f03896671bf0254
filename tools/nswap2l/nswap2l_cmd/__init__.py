# SPDX-License-Identifier: GPL-2.0
"""nswap2l: create, watch, tune and trace dm-nswap2l devices."""

# The project's version, dkms.conf's PACKAGE_VERSION (a host test checks
# that they agree): here too, so that a pip-installed command knows it.
__version__ = "0.1.0"
