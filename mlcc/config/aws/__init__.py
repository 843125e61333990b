"""AWS facts the config checks against: botocore rules, instance GPUs, capacity, CUDA fit."""
