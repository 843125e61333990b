"""Facts about the systems the program runs against, with their sources (docs/operator-facts.md)."""
