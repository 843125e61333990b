"""The speculation dashboard and alert rules of a stack, generated from it (pure;
docs/observability.md): metric names (`metric_names`), the PromQL of each figure (`promql`), the
stack's endpoints and twins (`view`), the Grafana dashboard (`dashboard`), the Prometheus rule
groups (`rules`) and where they are delivered (`delivery`)."""
