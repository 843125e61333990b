"""The account part of preflight: fetch the account's facts in parallel, then check them."""
