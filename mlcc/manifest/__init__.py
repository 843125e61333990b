"""The InferenceEndpointConfig of each endpoint as pure data, from the validated config."""
