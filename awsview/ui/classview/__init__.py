"""The class view: one card per learner, and a learner's panels."""
