"""skpmlp's version: one literal, read by setuptools (``setup.cfg``) without importing torch."""

__version__ = "0.2.0"
