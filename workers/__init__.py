"""Generic worker runtime and one executor per analysis component."""
