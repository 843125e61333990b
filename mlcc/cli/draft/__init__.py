"""`mlcc draft`: the draft loop's commands (docs/draft.md): dataset, regenerate, status."""
