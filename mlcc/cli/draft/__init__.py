"""`mlcc draft`: training a draft on an endpoint's own traffic (issue #45); `dataset` so far."""
