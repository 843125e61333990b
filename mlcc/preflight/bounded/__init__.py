"""Reading what the outside world answers, bounded: one typed reader for config.json values
(`values.py`), one size limit per Hub answer and no compressed answers (`hub_http.py`), one
reader of the Hub cache's files that blames the cache, not the Hub (`hub_cache.py`), one size
limit per AWS answer and one page guard per AWS list (`aws_answers.py`), the calls run in
parallel under one deadline (`parallel.py`). docs/preflight.md
("Limits") states every limit."""
