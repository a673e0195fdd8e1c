"""The steps a task passes through, one module per concern, around a small core (handling).

Each step is `async step(job, call_next)`: it may look at the delivery and the task before
calling the rest of the chain, and at the job's results and settlement after it. Adding a
concern (tracing, signing results) is adding a step to `workers.handling.steps_for`.
"""
