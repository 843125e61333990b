"""Speculative-decoding LLM endpoints on SageMaker HyperPod (EKS), as a Pulumi program."""
