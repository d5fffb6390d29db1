"""Maintainer tools for gpudoctor; not part of the installed package (see README.md)."""
