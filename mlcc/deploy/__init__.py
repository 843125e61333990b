"""What happens after `pulumi up`: is each endpoint serving, as configured (docs/deploy.md).

`verify` holds the decisions of `mlcc verify`; `snapshot`, `pods` and `readiness` the pure
decisions of the deploy wait (what the cluster shows -> keep waiting, serving, or failed with
the reason); `kubeconfig` and `cluster` the thin layer over the kubernetes client; `waiter` the
loop that `pulumi up` (mlcc/components/readiness.py) and `mlcc verify --wait` both run.
"""
