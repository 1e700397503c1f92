"""The polling side: pollers, their scheduler, the local store, start-up (preflight, lab
detection) and the live loop. Talks to AWS only through the guarded `Connection`; never imports
a UI library."""
