"""What happens after `pulumi up`: the decisions of `mlcc verify`."""
