"""A prebuilt hp:image's own config (labels and env), read from ECR, against hp:engineVersion."""
