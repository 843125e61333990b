"""The HyperPod inference operator's features of an endpoint: keys, CRD fields, rules."""
