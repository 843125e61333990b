"""How `mlcc bench` reaches an endpoint: access, transport, streaming, SageMaker, deadlines."""
