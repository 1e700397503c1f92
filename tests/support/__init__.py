"""What the tests share: sample models, the Pilot probe that reads the screen back, the emulator
fixture's process, helpers. Outside the wheel (tests/cli/test_install.py lists it)."""
