"""Pulumi stack files read and edited offline as the Pulumi CLI would: safe YAML, `--set`
overrides, project defaults and declared types, the `mlcc optimize --apply` edit.
"""
