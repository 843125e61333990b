"""The pure speculative core over the engine contract: engines and their releases, speculative
settings and the algorithm checks.
"""
