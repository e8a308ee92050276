"""The `l0kit` command line: the entry point and one module per shared verb (eval and models, report, describe)."""
