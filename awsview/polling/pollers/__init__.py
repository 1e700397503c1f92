"""The pollers: one per AWS read, each turning its calls into snapshots."""
