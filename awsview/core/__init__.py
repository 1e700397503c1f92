"""Pure view-model code: no UI library, no I/O, no AWS. What the model means, as plain values and
strings."""
