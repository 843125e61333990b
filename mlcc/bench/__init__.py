"""`mlcc bench`: measure what speculative decoding buys on a served endpoint.

Pure logic (Prometheus text, speculative figures, stream timing, statistics, reports) is kept
apart from the I/O (HTTP and SageMaker transports, the concurrent runner); `mlcc.cli.bench.command`
wires them together.
"""
