"""`mlcc bench --concurrency 1,4,16,64`: the sweep against the baseline twin, its crossover and the
load-aware schedule it recommends (docs/bench.md, "Sweeping concurrency"). Pure: the runs are
made by `mlcc.cli.bench.sweep`."""
