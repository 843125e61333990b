"""Stack config -> one frozen, validated model: the key schema, typed reads, the stack, its
endpoints, infrastructure, capacity, autoscaling, AWS rules and `hp:optimize`.
"""
