"""Data files of the analyzers (a package so that setuptools ships them as package data)."""
