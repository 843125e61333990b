"""`mlcc verify`: a running endpoint against its stack config, the deploy wait and live figures."""
