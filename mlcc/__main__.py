from mlcc.cli import entry

entry()
