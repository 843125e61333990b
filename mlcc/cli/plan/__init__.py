"""`mlcc plan`: the offline plan of a stack and the files it writes."""
