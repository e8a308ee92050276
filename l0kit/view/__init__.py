"""The run page: one static HTML page of a run's items and answers."""
