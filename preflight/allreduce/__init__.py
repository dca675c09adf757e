"""all_reduce bandwidth test between device pairs: schedule, worker script and verdict."""
