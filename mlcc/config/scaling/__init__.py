"""`hp:autoscaling`: the autoscaling spec and the limits KEDA, the HPA and AWS put on it."""
