"""Pure analyzers of the four components, their data files, and the clients of optional services.

Modules here take text (or a file path) and return findings; the executors in
`workers.executors` are the thin adapters that feed them tasks and do the I/O.
"""
