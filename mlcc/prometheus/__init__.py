"""Asking a Prometheus (a server's URL, or an Amazon Managed Service for Prometheus workspace
signed with SigV4) for an endpoint's live figures: `mlcc verify --prometheus/--amp-workspace`
(docs/verify.md, "Live figures")."""
