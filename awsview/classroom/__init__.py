"""The class view's data side: the roster and the learners it follows."""
