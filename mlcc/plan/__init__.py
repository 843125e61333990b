"""The offline plan (`mlcc plan`): the program run under Pulumi's mocks, the report and the diff."""
