"""The embedded lab emulator (moto server plus what the labs need). Imports moto lazily."""
