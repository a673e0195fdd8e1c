"""Operating the pipeline: the `verdict` command line and the local process supervisor."""
