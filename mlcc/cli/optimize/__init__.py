"""`mlcc optimize`: SageMaker AI recommendation jobs from the command line, and applying one."""
