"""`mlcc bench`: its command line, the concurrency sweep, the cost and the schedule it
recommends."""
