"""The Elo table as the CLI, the TUI and the run summary show it, assembled from files.

``elo_table`` joins the fit, its intervals and each arm's token costs into one report;
``elo_files`` builds that report from a comparisons file and ledgers; ``elo_columns`` says how
its table reads (columns, titles, digits, the order they give way on a narrow screen) on every
face.
"""
