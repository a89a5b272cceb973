"""The ``qdecode`` command line (see ``qdecode --help``)."""
