"""Preflight: facts from outside the stack file (the models, the AWS account) checked before
anything is created. Pure check functions over typed facts, and thin fetchers.
"""
