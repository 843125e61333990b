"""The SageMaker AI recommendation job: names, requests, API calls, reply parsing, polling, the
final choice and the dynamic provider that runs it at `pulumi up`.
"""
