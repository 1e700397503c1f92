"""Pure model code: what the pollers know, as immutable snapshots renderers show and tests check.

Nothing in this package calls AWS or imports textual/rich: ASL definitions (`asl`), execution
histories (`history`), log lines (`loglines`), DynamoDB items (`items`) and the resource
snapshots built from them take plain data in and give frozen dataclasses out.
"""
