"""The cluster side: VPC, EKS, the HyperPod cluster, storage, access and IAM."""
