"""tests/docs: the built site in a real browser (the `docs` marker) and its figures."""
